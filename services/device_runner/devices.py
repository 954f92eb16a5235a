"""Opens the device a runner drives: a SimPhone, or a real phone through AdbPhone."""

from __future__ import annotations

import logging

from devices.protocol import Device
from services.device_runner.settings import DeviceRunnerSettings

__all__ = ["open_device"]

logger = logging.getLogger(__name__)


def open_device(settings: DeviceRunnerSettings) -> Device:
    """The device named by `settings` (kind sim or adb), ready for reset()."""
    if settings.kind == "sim":
        from devices.sim import SimPhone

        return SimPhone(settings.device_id)
    from devices.adb.phone import AdbPhone
    from devices.adb.settings import load_adb_settings

    overrides = {"serial": settings.adb_serial} if settings.adb_serial else {}
    return AdbPhone(settings.device_id, settings=load_adb_settings(**overrides))
