"""Runs the trainer service until Ctrl-C: `python -m services.trainer`.

How to run (a local broker is started when KAFKA_BOOTSTRAP_SERVERS is unset):

    FLYWHEEL_TRAINER_BASE_MODEL=var/models/smollm2-135m python -m services.trainer

It reads `flywheel.datasets`; each SFT snapshot is trained on from the current model, each RL
snapshot runs GRPO+CARE (on the tasks its `task` column names, else the train split); it publishes `checkpoint.saved` on
`flywheel.checkpoints` and RL groups and training feedback on `flywheel.feedback`.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading

from schemas.settings import SettingsError
from services.trainer.loop import run_trainer
from services.trainer.settings import load_trainer_settings
from streams.broker import ensure_broker
from streams.settings import BusSettings

__all__ = ["main"]

logger = logging.getLogger(__name__)


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        settings = load_trainer_settings()
    except SettingsError as error:
        sys.exit(f"error: {error}")
    bootstrap, started = ensure_broker(BusSettings())
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        state = run_trainer(settings, bootstrap, stop)
        logger.info("trainer stopped; current model %s, %d snapshots trained", state.current_model,
                    len(state.trained))
    finally:
        if started is not None:
            started.stop()


if __name__ == "__main__":
    main()
