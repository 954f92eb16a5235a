"""The device contract on AdbPhone's stock profile inside the harness, through the real adb
server and a fake adbd that answers as stock Android (its own contacts, settings, alarms and
UI — no companion apps)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from devices.adb.phone import AdbPhone
from devices.harness.harness import Harness
from devices.protocol import Device
from schemas.actions import Click, OpenApp
from tests.devices.adb_stock.conftest import stock_settings
from tests.devices.contract import DeviceContract, tool
from tests.devices.fake_adbd import RealAdbServer, StockAndroid, stock_device


class TestStockAdbPhoneContract(DeviceContract):
    supports_fork = False
    home_icons: ClassVar[tuple[str, str]] = ("Contacts", "Clock")
    second_app: ClassVar[str] = "clock"
    has_world = False
    alarm_details = False

    @pytest.fixture(autouse=True)
    def _server(self, adb_server: RealAdbServer, tmp_path: Path) -> None:
        self.server = adb_server
        self.blob_dir = tmp_path / "blobs"

    def make_device(self) -> Iterator[Device]:
        with stock_device(StockAndroid()) as daemon:
            self.server.connect(daemon.serial)
            phone = Harness(AdbPhone(daemon.serial, settings=stock_settings(
                self.server, daemon.serial, self.blob_dir)))
            yield phone
            phone.close()
        self.server.adb("disconnect", daemon.serial)

    def test_open_app_click_and_type_change_the_screen_and_the_state(self, ready: Device) -> None:
        """Stock apps differ from the sim's: the GUI case is Settings → Display → Dark theme."""
        obs = ready.act(OpenApp(app_name="Settings"))
        assert obs.foreground_app == "settings"
        display = next(i for i, e in enumerate(obs.screen) if e.text == "Display")
        obs = ready.act(Click(index=display))
        label = next(i for i, e in enumerate(obs.screen) if e.text == "Dark theme")
        switch = next(i for i, e in enumerate(obs.screen)  # stock: no desc, the label's row
                      if e.is_checkable and e.bounds.top == obs.screen[label].bounds.top)
        assert not obs.screen[switch].is_checked
        obs = ready.act(Click(index=switch))
        assert obs.screen[switch].is_checked
        assert tool(ready, "settings.get", key="dark_mode").value["value"] is True
