"""Opens the device a runner drives: a SimPhone, or a real phone through AdbPhone, inside the
default harness (memory, skills, sub-agents and answers run there, not on the phone)."""

from __future__ import annotations

import logging

from devices.protocol import Device
from services.device_runner.settings import DeviceRunnerSettings

__all__ = ["open_device", "open_devices"]

logger = logging.getLogger(__name__)


def open_device(settings: DeviceRunnerSettings) -> Device:
    """The device named by `settings` inside the default harness, ready for reset()."""
    from devices.harness.harness import Harness

    return Harness(_open_phone(settings))


def open_devices(settings: DeviceRunnerSettings) -> list[Device]:
    """Every phone the runner serves (`settings.device_ids`), each inside the default harness;
    if one cannot open, those already open are closed and the error goes on."""
    if settings.phones == 1:
        return [open_device(settings)]
    opened: list[Device] = []
    try:
        for device_id in settings.device_ids:
            opened.append(open_device(settings.model_copy(update={"device_id": device_id,
                                                                  "phones": 1})))
    except BaseException:
        for device in opened:
            device.close()
        raise
    return opened


def _open_phone(settings: DeviceRunnerSettings) -> Device:
    """The device named by `settings`, ready for reset().

    For kind 'adb' the adb serial is `adb_serial`, or the device id itself when unset (so
    `--device-id emulator-5554` works as listed by `flywheel devices list`); the phone then
    answers to the runner's device id, which is the key of its actions.
    """
    if settings.kind == "sim":
        from devices.sim import SimPhone

        return SimPhone.from_settings(settings.device_id)  # FLYWHEEL_SIM_* (fault rate, seeds), checked
    from devices.adb.phone import AdbPhone
    from devices.adb.settings import load_adb_settings

    phone = AdbPhone(settings.adb_serial or settings.device_id, settings=load_adb_settings())
    phone.device_id = settings.device_id
    return phone
