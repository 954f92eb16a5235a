"""The device contract on AdbPhone inside the harness, driven through the real adbutils client
and the fake adb server (backed by a SimPhone)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from devices.adb.phone import AdbPhone
from devices.harness.harness import Harness
from devices.protocol import Device
from devices.sim.phone import SimPhone
from tests.devices.adb.conftest import SERIAL, make_settings
from tests.devices.contract import DeviceContract
from tests.devices.fake_adb import FakeAdbServer, FakeDevice


class TestAdbPhoneContract(DeviceContract):
    supports_fork = False

    @pytest.fixture(autouse=True)
    def _blob_dir(self, tmp_path: Path) -> None:
        self.blob_dir = tmp_path / "blobs"

    def make_device(self) -> Iterator[Device]:
        with FakeAdbServer({SERIAL: FakeDevice(SimPhone("sim-behind-adb"))}) as server:
            phone = Harness(AdbPhone(SERIAL, settings=make_settings(server, self.blob_dir)))
            yield phone
            phone.close()
