"""Run the review gate alone: the queue from the topics, the web app, signed decisions.

How to run:  KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:19092 python -m services.gate
(or with the local broker from `flywheel broker start`). It refuses to start without its
signing key (`flywheel gate keygen` creates one; FLYWHEEL_GATE_KEY_PATH points elsewhere),
and issues no tokens (`flywheel gate token NAME`). Stops on SIGINT/SIGTERM. It starts like
every service (services.service_main.run_service); `flywheel gate` is the same gate with the
CLI's conveniences (topics created, a live status).
"""

from __future__ import annotations

import logging
import sys
import threading
from pathlib import Path

from services.gate.launch import GateStartError, start_gate
from services.gate.settings import GateSettings, load_gate_settings
from services.service_main import run_service
from streams.settings import load_bus_settings

__all__ = ["main", "run_gate"]

logger = logging.getLogger("services.gate")


def run_gate(settings: GateSettings, bootstrap: str, stop: threading.Event) -> None:
    """Serves the gate on `bootstrap` until `stop` is set or its feed fails."""
    try:
        handle = start_gate(bootstrap, Path(load_bus_settings().data_dir), settings)
    except GateStartError as error:
        sys.exit(f"error: {error}")
    logger.info("%s", handle.banner())
    try:
        while not stop.wait(0.5):
            if handle.feed.error is not None:
                logger.error("the gate's feed stopped: %s", handle.feed.error)
                break
    finally:
        handle.stop()


def main() -> None:
    run_service(load_gate_settings, run_gate)


if __name__ == "__main__":
    main()
