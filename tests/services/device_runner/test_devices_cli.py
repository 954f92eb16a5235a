"""`flywheel devices list`: sim devices always, adb devices when an adb server answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from services.cli.main import app
from streams.broker import free_port
from tests.devices.fake_adb import FakeAdbServer, FakeDevice
from tests.devices.fake_adbd.adb_server import spawn_recorder

runner = CliRunner()


@pytest.fixture(autouse=True)
def _no_real_adb(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    # Listing devices must never start an adb server: the adb adbutils would run records it.
    recorder, marker = spawn_recorder(tmp_path)
    monkeypatch.setenv("ADBUTILS_ADB_PATH", str(recorder))
    monkeypatch.setenv("FLYWHEEL_DEVICE_RUNNER_SIM_DEVICES", "2")
    yield
    assert not marker.exists(), "something tried to start an adb server"


def test_without_an_adb_server_it_lists_sims_and_says_why_no_phones(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLYWHEEL_ADB_PORT", str(free_port()))  # nothing listens there
    result = runner.invoke(app, ["devices", "list"])
    assert result.exit_code == 0, result.output
    assert "sim-0" in result.output and "sim-1" in result.output and "sim-2" not in result.output
    assert "no adb server is running" in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_json_lists_the_phones_of_a_running_adb_server(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAdbServer({"emulator-5554": FakeDevice(None)}) as server:
        monkeypatch.setenv("FLYWHEEL_ADB_PORT", str(server.port))
        result = runner.invoke(app, ["devices", "list", "--json"])
    assert result.exit_code == 0, result.output
    listing = json.loads(result.output)
    assert listing["note"] is None
    assert [(d["device_id"], d["kind"], d["state"]) for d in listing["devices"]] == [
        ("sim-0", "sim", "available"), ("sim-1", "sim", "available"),
        ("emulator-5554", "adb", "device")]


def test_a_bad_setting_is_one_sentence_naming_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLYWHEEL_DEVICE_RUNNER_SIM_DEVICES", "-1")
    result = runner.invoke(app, ["devices", "list"])
    assert result.exit_code == 1
    assert "FLYWHEEL_DEVICE_RUNNER_SIM_DEVICES" in result.output
    assert "Traceback" not in result.output


def test_run_rejects_an_unknown_kind_without_a_traceback() -> None:
    result = runner.invoke(app, ["devices", "run", "--kind", "tablet"])
    assert result.exit_code == 1
    assert "kind" in result.output and "Traceback" not in result.output
