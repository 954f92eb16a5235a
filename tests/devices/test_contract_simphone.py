"""The device contract on the simulated phone inside the harness (planner actions need one)."""

from __future__ import annotations

from collections.abc import Iterator

from devices.harness.harness import Harness
from devices.protocol import Device
from devices.sim.phone import SimPhone
from tests.devices.contract import DeviceContract


class TestSimPhoneContract(DeviceContract):
    supports_fork = True

    def make_device(self) -> Iterator[Device]:
        phone = Harness(SimPhone("sim-contract"))
        yield phone
        phone.close()
