"""Stops a service soon after its broker dies, with one sentence instead of a log flood.

Every broker-backed service's start-up calls `watch_broker(bootstrap, name)`. A daemon thread
asks the broker for metadata every `EVERY_S` seconds; after `MISSES` failures in a row (about 4 s
with the 2 s probe timeout) it prints `error: the broker at … stopped answering; <name> stops`,
silences the client libraries, sends the process SIGTERM (every service's clean stop) and, if
the service is still running `GRACE_S` later, ends it (its state is durable per batch and its
offsets are committed after processing, so this is a kill -9, which the loop's tests show loses
nothing). The process exits with status 1. Before that, the clients' repeated connection errors are let through once per
`QUIET_S` seconds per kind of message, and without their tracebacks, so nothing buries the
sentence.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import signal
import sys
import threading
import time

from streams.broker import kafka_answers
from streams.redact import mask_bootstrap

__all__ = ["EVERY_S", "GRACE_S", "MISSES", "RepeatFilter", "watch_broker"]

logger = logging.getLogger(__name__)

EVERY_S = 1.0
MISSES = 3
GRACE_S = 5.0
QUIET_S = 30.0
_DIGITS = re.compile(r"\d+")


#: The client libraries whose connection errors repeat many times a second while a broker is down.
CLIENT_LOGGERS = ("kafka", "aiokafka", "faust", "mode")


class RepeatFilter(logging.Filter):
    """Lets each kind of client-library message (its text with numbers taken out) through once
    per `quiet_s`; the service's own lines always pass."""

    def __init__(self, quiet_s: float = QUIET_S) -> None:
        super().__init__()
        self.quiet_s = quiet_s
        self._last: dict[str, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.split(".", 1)[0] not in CLIENT_LOGGERS:
            return True
        kind = _DIGITS.sub("#", f"{record.name}:{record.msg}")
        now = time.monotonic()
        if now - self._last.get(kind, -self.quiet_s) < self.quiet_s:
            return False
        self._last[kind] = now
        if len(self._last) > 1000:  # bounded: forget the oldest kinds
            for old in sorted(self._last, key=self._last.__getitem__)[:500]:
                del self._last[old]
        return True


def _one_line_client_errors() -> None:
    """Client-library records keep their message but lose their traceback (a broker dropping a
    connection is not a bug of the service): a record factory, so every handler sees it, faust's
    too."""
    previous = logging.getLogRecordFactory()
    if getattr(previous, "flywheel_one_line", False):
        return

    def factory(*args: object, **kwargs: object) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if record.exc_info and record.name.split(".", 1)[0] in CLIENT_LOGGERS:
            error = record.exc_info[1]
            record.msg = f"{record.msg} ({type(error).__name__}: {error})" if error is not None else record.msg
            record.exc_info, record.exc_text = None, None
        return record

    factory.flywheel_one_line = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


def _quiet_clients() -> None:
    _one_line_client_errors()
    repeat = RepeatFilter()
    for handler in logging.getLogger().handlers:  # child loggers' records skip their parents' filters
        if not any(isinstance(f, RepeatFilter) for f in handler.filters):
            handler.addFilter(repeat)


def watch_broker(bootstrap: str, name: str, *, every_s: float = EVERY_S, misses: int = MISSES,
                 grace_s: float = GRACE_S, exit_now: bool = False) -> threading.Event:
    """Starts the watchdog thread for the service `name` on `bootstrap`; returns the event that
    stops it (set it when the service has stopped, so a watchdog never outlives its service in
    a process that goes on, such as a test's). With `exit_now` (faust workers, whose shutdown
    against a dead broker only prints tracebacks) the process ends right after the sentence
    instead of stopping through SIGTERM."""
    _quiet_clients()
    died, done = threading.Event(), threading.Event()
    atexit.register(lambda: _exit_1() if died.is_set() else None)

    def watch() -> None:
        failures = 0
        while failures < misses:
            if done.wait(every_s):
                return
            failures = 0 if kafka_answers(bootstrap) else failures + 1
        if done.is_set():
            return
        died.set()
        for client in CLIENT_LOGGERS:  # their retries against the dead broker say nothing new
            logging.getLogger(client).setLevel(logging.CRITICAL + 1)
        print(f"error: the broker at {mask_bootstrap(bootstrap)} stopped answering; {name} stops "
              f"(start it again once the broker is back)", file=sys.__stderr__, flush=True)
        if not exit_now:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(grace_s)
        _exit_1()

    threading.Thread(target=watch, name=f"{name}-broker-watch", daemon=True).start()
    return done


def _exit_1() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(1)
