"""The real adb server (the binary in the adbutils wheel) on a private port and HOME, for tests.

It runs as `adb -P PORT nodaemon server`, a child process this object owns and stops; nothing
is left on the default port 5037. Devices are attached with `adb connect 127.0.0.1:N`.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Self

from streams.lifecycle import stop_process

__all__ = ["RealAdbServer", "adb_binary", "free_port", "spawn_recorder"]

logger = logging.getLogger(__name__)

#: How long the server or a connected device may take to come up on a loaded 2-core box.
READY_TIMEOUT_S = 20.0


def adb_binary() -> Path:
    """The adbutils wheel's adb (exec bit restored if the install dropped it)."""
    from services.adb_server.__main__ import adb_binary as wheel_adb

    return wheel_adb()


def spawn_recorder(folder: Path) -> tuple[Path, Path]:
    """An `adb` that only records being run: point ADBUTILS_ADB_PATH at it, then assert the
    marker does not exist (adbutils runs `adb start-server` when it cannot connect)."""
    marker = folder / "adb-was-run"
    recorder = folder / "adb"
    recorder.write_text(f"#!/bin/sh\necho \"$@\" >> {marker}\nexit 1\n")
    recorder.chmod(0o755)
    return recorder, marker


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RealAdbServer:
    """`adb -P port nodaemon server` in a temp HOME; `connect`, `devices`, `restart`, `stop`."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self._home = tempfile.TemporaryDirectory(prefix="flywheel-adb-home-")
        self._process: subprocess.Popen[bytes] | None = None
        self.log = Path(self._home.name) / "adb-server.log"

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "HOME": self._home.name, "ADB_MDNS": "0",
                "ADB_MDNS_AUTO_CONNECT": "0", "ADB_LIBUSB": "0",
                "ANDROID_ADB_SERVER_PORT": str(self.port)}

    def adb(self, *args: str, timeout: float = READY_TIMEOUT_S) -> str:
        done = subprocess.run([str(adb_binary()), "-P", str(self.port), *args], env=self.env,
                              capture_output=True, timeout=timeout, check=False)
        return (done.stdout + done.stderr).decode(errors="replace")

    def start(self) -> Self:
        with self.log.open("ab") as log:
            self._process = subprocess.Popen(
                [str(adb_binary()), "-P", str(self.port), "nodaemon", "server"],
                env=self.env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                if self._process.poll() is not None:
                    break
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"the adb server did not start on port {self.port}: "
                           f"{self.log.read_text(errors='replace')[-500:]}")

    def connect(self, serial: str) -> None:
        """`adb connect serial`, then wait until the server lists it as 'device'."""
        said = self.adb("connect", serial)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.state(serial) == "device":
                return
            time.sleep(0.05)
        raise RuntimeError(f"adb connect {serial} did not bring the device up: {said.strip()}")

    def state(self, serial: str) -> str | None:
        for line in self.adb("devices").splitlines()[1:]:
            parts = line.split()
            if len(parts) >= 2 and parts[0] == serial:
                return parts[1]
        return None

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        stop_process(process, grace_s=10)

    def restart(self) -> None:
        """Stops the server and starts a fresh one on the same port (it forgets connections)."""
        self.stop()
        self.start()

    def close(self) -> None:
        self.stop()
        self._home.cleanup()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
