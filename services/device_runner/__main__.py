"""Runs one device runner until Ctrl-C: `python -m services.device_runner`.

How to run (a local broker is started when KAFKA_BOOTSTRAP_SERVERS is unset):

    FLYWHEEL_DEVICE_RUNNER_DEVICE_ID=sim-0 python -m services.device_runner
    FLYWHEEL_DEVICE_RUNNER_KIND=adb FLYWHEEL_DEVICE_RUNNER_DEVICE_ID=emulator-5554 \\
        python -m services.device_runner
    FLYWHEEL_DEVICE_RUNNER_DEVICE_ID=sim-0 FLYWHEEL_DEVICE_RUNNER_PHONES=32 python -m services.device_runner

It reads `flywheel.actions` for its device id, executes each action on the phone and
publishes `flywheel.observations`; `flywheel devices run` does the same with a status line.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading

from devices.protocol import DeviceError
from devices.sim.settings import load_settings as load_sim_settings
from services.broker_watch import watch_broker
from services.device_runner.devices import open_devices
from services.device_runner.loop import run_device_runner
from services.device_runner.settings import load_device_runner_settings
from services.service_main import configure_logging
from streams.admin import AdminError
from streams.broker import BrokerError, kafka_answers
from streams.redact import mask_bootstrap
from streams.settings import load_bus_settings

__all__ = ["main"]

logger = logging.getLogger(__name__)


def main() -> int:
    configure_logging()
    try:
        settings, bus = load_device_runner_settings(), load_bus_settings()
        if settings.kind == "sim":
            load_sim_settings()  # FLYWHEEL_SIM_* (fault rate, seeds) are checked before the broker
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    bootstrap = bus.bootstrap_or_none()
    if bootstrap is not None and not kafka_answers(bootstrap):
        print(f"error: Kafka at {mask_bootstrap(bootstrap)} does not answer; start it or fix "
              f"KAFKA_BOOTSTRAP_SERVERS", file=sys.stderr)
        return 1
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if bootstrap is not None:
        watch_broker(bootstrap, f"the device runner of {settings.device_id}")
    try:
        devices = open_devices(settings)
    except DeviceError as error:
        print(f"error: cannot open device {settings.device_id}: {error}", file=sys.stderr)
        return 1
    try:
        memory = run_device_runner(settings, devices, stop, bootstrap=bootstrap)
    except KeyboardInterrupt:
        return 0
    except (BrokerError, AdminError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        for device in devices:
            device.close()
    logger.info("stopped: executed %d, replayed %d, failed %d", memory.executed, memory.replayed,
                memory.failed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
