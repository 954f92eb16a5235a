"""Supervision for `flywheel run`: services in threads restarted when they fail, a broker
watchdog, and the run record that lets the next start report what a kill -9 could have lost.

A service is a name and a function `run(stop: threading.Event) -> None` that serves until
`stop` is set; raising means it failed. The supervisor restarts a failed service with a
short backoff (it resumes from its group's committed offsets, so nothing acknowledged is
lost), and gives up on it after `max_restarts` failures within `restart_window_s`, which
stops the run. Adding a service to `flywheel run` is one line:

    supervisor.add("verifier", lambda stop: run_verifier(settings, stop, bootstrap=bootstrap))
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from streams.broker import pid_exists
from streams.dlq import error_sentence

__all__ = ["RunRecord", "Service", "Supervisor", "kept_broker_pid", "previous_run_report"]

logger = logging.getLogger(__name__)

#: A failed service waits this long before its restart (then twice as long, up to the cap):
#: enough for a consumer group to notice the old member left, short enough to stay in the bound.
RESTART_BACKOFF_S = 0.5
RESTART_BACKOFF_CAP_S = 5.0
#: More failures than this within the window means a bug, not bad luck: the run stops.
MAX_RESTARTS = 5
RESTART_WINDOW_S = 60.0
#: How long a stopping service may take to finish its batch and leave its group.
JOIN_TIMEOUT_S = 15.0
#: File under the data dir recording the run in progress (removed on a clean stop).
RUN_RECORD = "run.json"


@dataclass
class Service:
    """One supervised service and what became of it."""

    name: str
    run: Callable[[threading.Event], None]
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    failures: list[float] = field(default_factory=list)
    restarts: int = 0
    last_error: str | None = None
    gave_up: bool = False
    restart_at: float | None = None


class Supervisor:
    """Runs services in threads, restarts failed ones, and watches the broker."""

    def __init__(self, broker_alive: Callable[[], bool] | None = None, *,
                 max_restarts: int = MAX_RESTARTS, restart_window_s: float = RESTART_WINDOW_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.services: list[Service] = []
        self.broker_alive = broker_alive
        self.max_restarts = max_restarts
        self.restart_window_s = restart_window_s
        self.clock = clock
        self._failed = threading.Event()
        self._lock = threading.Lock()

    def add(self, name: str, run: Callable[[threading.Event], None]) -> Service:
        service = Service(name, run)
        self.services.append(service)
        return service

    def start(self) -> None:
        for service in self.services:
            self._launch(service)

    def _launch(self, service: Service) -> None:
        service.stop = threading.Event()
        service.thread = threading.Thread(target=self._body, args=(service,), daemon=True,
                                          name=f"service-{service.name}")
        service.thread.start()

    def _body(self, service: Service) -> None:
        try:
            service.run(service.stop)
        except Exception as error:  # noqa: BLE001 - a failing service is what we supervise
            with self._lock:
                service.last_error = f"{type(error).__name__}: {error_sentence(error)}"
                service.failures.append(self.clock())
            logger.error("service %s failed (%s); the supervisor restarts it", service.name,
                         service.last_error)
            self._failed.set()

    def check(self) -> str | None:
        """Restarts failed services whose backoff has passed; returns a one-sentence reason to
        stop the run (a service failing too often, the broker gone), else None."""
        if self.broker_alive is not None and not self.broker_alive():
            return "the broker stopped answering"
        now = self.clock()
        for service in self.services:
            thread = service.thread
            if thread is None or thread.is_alive() or service.stop.is_set() or service.gave_up:
                continue
            recent = [t for t in service.failures if now - t <= self.restart_window_s]
            if len(recent) > self.max_restarts:
                service.gave_up = True
                return (f"service {service.name} failed {len(recent)} times in "
                        f"{self.restart_window_s:.0f} s (last: {service.last_error})")
            if not service.failures:  # it returned without being asked: serve it again
                service.failures.append(now)
            if service.restart_at is None:
                backoff = min(RESTART_BACKOFF_CAP_S, RESTART_BACKOFF_S * 2 ** (len(recent) - 1))
                service.restart_at = now + backoff
            if now >= service.restart_at:
                service.restart_at = None
                service.restarts += 1
                logger.warning("restarting service %s (restart %d)", service.name,
                               service.restarts)
                self._launch(service)
        return None

    def stop(self, timeout_s: float = JOIN_TIMEOUT_S) -> list[str]:
        """Stops the services in the reverse of the order they were added, each after the one
        added after it has stopped (the data loop before the device runners its rollout plays
        on, so its last episode is not cut off); returns the names still running."""
        deadline = self.clock() + timeout_s
        stuck = []
        for service in reversed(self.services):
            service.stop.set()
            if service.thread is not None:
                service.thread.join(max(0.0, deadline - self.clock()))
                if service.thread.is_alive():
                    stuck.append(service.name)
        return stuck[::-1]

    def summary(self) -> list[tuple[str, str]]:
        """(service, what happened) for the run's summary table."""
        rows = []
        for service in self.services:
            state = "gave up" if service.gave_up else "ran"
            detail = f"{state}, {service.restarts} restart(s)"
            if service.last_error:
                detail += f"; last failure: {service.last_error}"
            rows.append((service.name, detail))
        return rows


@dataclass
class RunRecord:
    """`<data_dir>/run.json` while a run is in progress: enough for the next start to say how
    much a kill -9 could have lost. Removed when the run stops cleanly."""

    path: Path
    bound_s: float
    pid: int = field(default_factory=os.getpid)

    def write(self, *, buffered: int, last_flush_age_s: float | None, broker_pid: int | None
              ) -> None:
        record = {"pid": self.pid, "bound_s": self.bound_s, "buffered": buffered,
                  "last_flush_age_s": last_flush_age_s, "broker_pid": broker_pid,
                  "at": datetime.now(UTC).isoformat()}
        tmp = self.path.with_suffix(".json.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(record))
            tmp.replace(self.path)
        except OSError as error:
            logger.warning("cannot write %s (%s)", self.path, error.strerror)

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


def kept_broker_pid(data_dir: Path) -> int | None:
    """The pid of the local broker a previous run left running (it did not stop cleanly), or
    None; the next run adopts that broker and stops it when it is done."""
    try:
        record = json.loads((data_dir / RUN_RECORD).read_text())
        pid = record.get("broker_pid")
        return int(pid) if pid else None
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def previous_run_report(data_dir: Path, broker_reused: bool, unarchived: int | None = None) -> str | None:
    """One sentence about a previous run that did not stop cleanly, or None: whether what it
    had not archived is lost (its in-memory broker died with it) or still on the kept broker,
    which this run archives. `unarchived` is the count measured on the kept broker (records
    past the archive's watermarks); the run's own last record is older than its death."""
    path = data_dir / RUN_RECORD
    try:
        record: dict[str, Any] = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return f"the record of a previous run ({path}) is unreadable; it may have lost events"
    pid = int(record.get("pid", 0) or 0)
    if pid and pid != os.getpid() and pid_exists(pid):
        return None  # still running (a second `flywheel run` against its broker)
    path.unlink(missing_ok=True)
    buffered = int(record.get("buffered", 0) or 0)
    bound = record.get("bound_s")
    when = record.get("at", "an unknown time")
    if broker_reused:
        count = (f"the {unarchived:,} records on it past the archive's watermarks" if unarchived is not None
                 else "what it had not archived")
        return (f"the previous run (pid {pid}) did not stop cleanly (last seen {when}); its "
                f"broker was kept, so {count} are archived now and nothing is lost")
    return (f"the previous run (pid {pid}) did not stop cleanly (last seen {when}) and its "
            f"in-memory broker is gone: up to {buffered:,} events buffered then, at most the "
            f"last {bound:g} s of traffic, may be missing from the archive")
