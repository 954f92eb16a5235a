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


@pytest.mark.parametrize(("serial", "offline", "words"), [
    ("emulator-5556", False, "the adb server lists no phone emulator-5556"),
    ("emulator-5554", True, "phone emulator-5554 is offline"),
])
def test_run_refuses_a_phone_that_is_not_ready_before_the_broker(
        serial: str, offline: bool, words: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An adb runner asks the adb server about its phone first: a phone that is not attached or
    not ready is one sentence, not a wait on the broker."""
    with FakeAdbServer({"emulator-5554": FakeDevice(None)}) as server:
        if offline:
            server.offline.add("emulator-5554")
        monkeypatch.setenv("FLYWHEEL_ADB_PORT", str(server.port))
        result = runner.invoke(app, ["devices", "run", "--serial", serial],
                               env={"KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1", "COLUMNS": "200"})
    output = " ".join(result.output.split())
    assert result.exit_code == 1 and words in output, output
    assert "Kafka" not in output and "Traceback" not in output


def test_run_refuses_a_serial_without_an_adb_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLYWHEEL_ADB_PORT", str(free_port()))  # nothing listens there
    result = runner.invoke(app, ["devices", "run", "--serial", "emulator-5554"],
                           env={"KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1", "COLUMNS": "200"})
    output = " ".join(result.output.split())
    assert result.exit_code == 1 and "did not answer" in output and "Kafka" not in output, output


def test_a_ready_phone_passes_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    from devices.adb.phone import AdbPhone
    from devices.adb.settings import load_adb_settings

    with FakeAdbServer({"emulator-5554": FakeDevice(None)}) as server:
        monkeypatch.setenv("FLYWHEEL_ADB_PORT", str(server.port))
        phone = AdbPhone("emulator-5554", settings=load_adb_settings())
        assert phone.adb.not_ready() is None
        server.disappear("emulator-5554")
        assert "lists no phone emulator-5554" in (phone.adb.not_ready() or "")
        phone.close()
