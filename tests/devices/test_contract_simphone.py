"""The device contract on the simulated phone."""

from __future__ import annotations

from collections.abc import Iterator

from devices.protocol import Device
from devices.sim.phone import SimPhone
from tests.devices.contract import DeviceContract


class TestSimPhoneContract(DeviceContract):
    supports_fork = True

    def make_device(self) -> Iterator[Device]:
        phone = SimPhone("sim-contract")
        yield phone
        phone.close()
