"""Runs the rollout service until SIGTERM / Ctrl-C.

    python -m services.rollout        # FLYWHEEL_ROLLOUT_POLICY=oracle by default

It starts like every service (services.service_main.run_service): a bad FLYWHEEL_ROLLOUT_* or
FLYWHEEL_SIM_* value, or a policy that cannot load, stops it at start-up with one sentence.
"""

from __future__ import annotations

import logging
import threading

from devices.sim.settings import load_settings as load_sim_settings
from services.rollout.policies import load_policy
from services.rollout.service import run_rollout
from services.rollout.settings import RolloutSettings, load_rollout_settings
from services.service_main import run_service
from streams.settings import load_bus_settings

__all__ = ["main"]

logger = logging.getLogger(__name__)


def _load() -> RolloutSettings:
    settings = load_rollout_settings()
    load_sim_settings()  # FLYWHEEL_SIM_* are read by the rollout's phones: checked before any start
    load_policy(settings.policy)  # a policy that cannot load stops here, not inside the loop
    return settings


def _roll(settings: RolloutSettings, bootstrap: str, stop: threading.Event) -> None:
    stats = run_rollout(settings, bootstrap, load_bus_settings().data_dir, stop)
    logger.info("stopped after %d episodes (%s)", stats.episodes, dict(stats.outcomes))


def main() -> None:
    run_service(_load, _roll)


if __name__ == "__main__":
    main()
