"""open_device: a sim runner gets a harnessed SimPhone; an adb runner drives a harnessed AdbPhone
through the adb server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from devices.harness.harness import Harness
from devices.sim import SimPhone
from schemas.episodes import DeviceFailed, ObservationRecorded
from services.device_runner.decide import RunnerMemory, decide
from services.device_runner.devices import open_device
from services.device_runner.settings import DeviceRunnerSettings
from tests.devices.fake_adb import FakeAdbServer, FakeDevice
from tests.services.device_runner.helpers import request

SERIAL = "emulator-5554"


@pytest.fixture
def adb_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeAdbServer]:
    with FakeAdbServer({SERIAL: FakeDevice(SimPhone(SERIAL))}) as server:
        for name, value in {"PORT": str(server.port), "RETRY_BACKOFF_S": "0", "WAIT_SCALE": "0",
                            "CALL_TIMEOUT_S": "5", "BLOB_DIR": str(tmp_path / "blobs")}.items():
            monkeypatch.setenv(f"FLYWHEEL_ADB_{name}", value)
        monkeypatch.setenv("ADBUTILS_ADB_PATH", "/bin/false")  # never start a real adb daemon
        yield server


def test_a_sim_runner_gets_a_harnessed_simphone_with_its_id() -> None:
    device = open_device(DeviceRunnerSettings(device_id="sim-7"))
    assert isinstance(device, Harness) and isinstance(device.device, SimPhone)
    assert device.device_id == "sim-7"


def test_an_adb_runner_executes_actions_until_the_phone_is_unplugged(
        adb_server: FakeAdbServer) -> None:
    settings = DeviceRunnerSettings(device_id="phone-1", kind="adb", adb_serial=SERIAL)
    device = open_device(settings)
    memory = RunnerMemory()
    try:
        assert device.device_id == "phone-1"
        [first] = decide(device, request("phone-1", "ep-1", 0), memory)
        assert isinstance(first, ObservationRecorded), first
        assert first.observation.result is not None and first.observation.result.ok
        assert adb_server.shell_commands(SERIAL)  # it really went over the adb wire
        adb_server.disappear(SERIAL)
        [lost] = decide(device, request("phone-1", "ep-1", 1), memory)
        assert isinstance(lost, DeviceFailed) and lost.reason == "disconnected"
    finally:
        device.close()
