"""The start-up the broker-backed services' `python -m` entry points share.

`configure_logging()` is every service's one log format (`LOG_FORMAT`: time, level, logger,
message; the Kafka clients' connection chatter at WARNING; secrets masked in every line): the
faust services' entry points call it before `services.dataflow.agent.serve`, the archiver's and
the device runner's before their own start-up (tests/services/test_service_main.py checks each). `run_service(load_settings, run)` configures
logging, loads the bus settings and the service's own (a bad value exits with the one sentence
naming the variable, never a traceback), finds the bus (KAFKA_BOOTSTRAP_SERVERS, the recorded
local broker, or a local broker started for this run), and calls `run(settings, bootstrap,
stop)` with a stop flag that Ctrl-C and SIGTERM set. A broker it started is stopped when `run`
returns or raises.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

from services.broker_watch import watch_broker
from streams.broker import ensure_broker
from streams.redact import install_log_redaction
from streams.settings import load_bus_settings

__all__ = ["LOG_FORMAT", "configure_logging", "run_service"]

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: Loggers whose INFO lines are connection chatter that drowns the service's own.
NOISY = ("kafka", "aiokafka")


def configure_logging() -> None:
    """The services' one log format, at INFO, with the Kafka clients' chatter at WARNING, and
    no secret in any line (bootstrap credentials, tokens: streams.redact)."""
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    for noisy in NOISY:
        logging.getLogger(noisy).setLevel(logging.WARNING)
    install_log_redaction()

S = TypeVar("S")
R = TypeVar("R")


def run_service(load_settings: Callable[[], S], run: Callable[[S, str, threading.Event], R]) -> R:
    """Runs a service loop until it returns (after Ctrl-C or SIGTERM); returns what it returned."""
    configure_logging()
    try:
        bus = load_bus_settings()
        settings = load_settings()
    except ValueError as error:  # SettingsError, and a service's own bad-config sentence
        sys.exit(f"error: {error}")
    bootstrap, started = ensure_broker(bus)
    watch = None
    if started is None:  # a broker of its own dies with it; another's death stops the service
        watch = watch_broker(bootstrap, getattr(run, "__module__", "the service").rsplit(".", 1)[0])
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        return run(settings, bootstrap, stop)
    finally:
        if watch is not None:
            watch.set()  # the service has stopped: so has its watchdog
        if started is not None:
            started.stop()
