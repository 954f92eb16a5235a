"""Runs the rollout service until SIGTERM / Ctrl-C.

    python -m services.rollout        # FLYWHEEL_ROLLOUT_POLICY=oracle by default
"""

from __future__ import annotations

import logging
import signal
import sys
import threading

from devices.sim.settings import load_settings as load_sim_settings
from services.broker_watch import watch_broker
from services.rollout.policies import PolicyError, load_policy
from services.rollout.service import run_rollout
from services.rollout.settings import load_rollout_settings
from streams.broker import ensure_broker
from streams.settings import load_bus_settings


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s rollout %(message)s")
    for noisy in ("kafka", "aiokafka"):  # connection chatter drowns the service's own lines
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        bus, settings = load_bus_settings(), load_rollout_settings()
        load_sim_settings()  # FLYWHEEL_SIM_* are read by the rollout's phones: checked before any start
        load_policy(settings.policy)  # a policy that cannot load stops here, not inside the loop
    except (ValueError, PolicyError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    bootstrap, _ = ensure_broker(bus)
    watch_broker(bootstrap, "the rollout")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stats = run_rollout(settings, bootstrap, bus.data_dir, stop)
    logging.getLogger("rollout").info("stopped after %d episodes (%s)", stats.episodes, dict(stats.outcomes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
