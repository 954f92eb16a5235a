"""Runs the evaluator service until Ctrl-C: `python -m services.evaluator`.

    FLYWHEEL_EVALUATOR_SPLIT=dev python -m services.evaluator

It reads `flywheel.checkpoints` and `flywheel.harness`; each new checkpoint (and each promoted
harness, with the newest checkpoint) is run on the split and reported as `eval.reported` on
`flywheel.evals`: overall, per family and tier, success, tokens, tool calls, 95% intervals.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading

from schemas.settings import SettingsError
from services.evaluator.loop import run_evaluator
from services.trainer.settings import load_evaluator_settings
from streams.broker import ensure_broker
from streams.settings import BusSettings

__all__ = ["main"]


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        settings = load_evaluator_settings()
    except SettingsError as error:
        sys.exit(f"error: {error}")
    bootstrap, started = ensure_broker(BusSettings())
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        run_evaluator(settings, bootstrap, stop)
    finally:
        if started is not None:
            started.stop()


if __name__ == "__main__":
    main()
