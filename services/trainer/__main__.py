"""Runs the trainer service until Ctrl-C: `python -m services.trainer`.

How to run (a local broker is started when KAFKA_BOOTSTRAP_SERVERS is unset):

    FLYWHEEL_TRAINER_BASE_MODEL=var/models/smollm2-135m python -m services.trainer

It reads `flywheel.datasets`; each SFT snapshot is trained on from the current model, each RL
snapshot runs GRPO+CARE (on the tasks its `task` column names, else the train split); it publishes `checkpoint.saved` on
`flywheel.checkpoints` and RL groups and training feedback on `flywheel.feedback`.
"""

from __future__ import annotations

import logging
import threading

from services.service_main import run_service
from services.trainer.loop import run_trainer
from services.trainer.settings import TrainerSettings, load_trainer_settings

__all__ = ["main"]

logger = logging.getLogger(__name__)


def _train(settings: TrainerSettings, bootstrap: str, stop: threading.Event) -> None:
    state = run_trainer(settings, bootstrap, stop)
    logger.info("trainer stopped; current model %s, %d snapshots trained", state.current_model,
                len(state.trained))


def main() -> None:
    run_service(load_trainer_settings, _train)


if __name__ == "__main__":
    main()
