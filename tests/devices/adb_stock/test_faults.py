"""Faults through the real adb server: a device killed mid-episode, slow replies, a restarted
device, and an adb server that stops and comes back — without any code path starting one."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from devices.adb.phone import AdbPhone
from devices.protocol import DeviceLost
from schemas.actions import Click, OpenApp, ToolCall, Wait
from tests.devices.adb_stock.conftest import stock_settings
from tests.devices.contract import CONTRACT_TASK
from tests.devices.fake_adbd import FakeAdbd, RealAdbServer, StockAndroid, stock_device


def test_a_device_killed_mid_episode_is_lost_and_comes_back(
        phone: AdbPhone, adbd: FakeAdbd, adb_server: RealAdbServer,
        android: StockAndroid) -> None:
    phone.reset(CONTRACT_TASK)
    phone.act(OpenApp(app_name="Settings"))
    adbd.kill()
    with pytest.raises(DeviceLost, match=adbd.serial):
        phone.act(ToolCall(name="settings.get", arguments={"key": "wifi"}))
    with stock_device(android, port=adbd.port) as again:  # the phone reboots on the same port
        adb_server.connect(again.serial)
        assert phone.reset(CONTRACT_TASK).foreground_app == "home"


def test_a_slow_read_is_retried(phone: AdbPhone, adbd: FakeAdbd) -> None:
    phone.reset(CONTRACT_TASK)
    slow = AdbPhone(adbd.serial, settings=phone.settings.model_copy(update={"call_timeout_s": 0.5}))
    adbd.stall(1.5, count=1)
    assert slow.observe().foreground_app == "home"
    assert slow.adb.retried == 1


def test_a_slow_tap_times_out_with_its_own_code_and_is_not_repeated(
        phone: AdbPhone, adbd: FakeAdbd, android: StockAndroid) -> None:
    obs = phone.reset(CONTRACT_TASK)
    slow = AdbPhone(adbd.serial, settings=phone.settings.model_copy(update={"call_timeout_s": 0.5}))
    slow.reset(CONTRACT_TASK)
    icon = next(i for i, e in enumerate(obs.screen) if e.text == "Clock")
    adbd.stall(1.5, count=1)
    result = slow.act(Click(index=icon)).result
    assert result is not None and result.error.code == "timeout"
    assert sum(s.startswith("shell,v2:input tap") for s in adbd.services) == 1


def test_a_stopped_server_is_lost_and_nothing_starts_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "adb-was-run"
    fake_adb = tmp_path / "adb"
    fake_adb.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    fake_adb.chmod(0o755)
    monkeypatch.setenv("ADBUTILS_ADB_PATH", str(fake_adb))  # what adbutils would spawn
    with RealAdbServer() as server, stock_device(StockAndroid()) as daemon:
        server.connect(daemon.serial)
        phone = AdbPhone(daemon.serial, settings=stock_settings(server, daemon.serial, tmp_path))
        phone.reset(CONTRACT_TASK)
        server.stop()
        started = time.monotonic()
        with pytest.raises(DeviceLost, match="stopped answering"):
            phone.observe()
        assert time.monotonic() - started < 5
        assert not marker.exists()
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", server.port), timeout=0.5).close()
        server.start()  # the operator restarts it; the same phone object recovers
        server.connect(daemon.serial)
        assert phone.reset(CONTRACT_TASK).foreground_app == "home"


def test_a_dump_that_fails_on_stderr_is_never_the_old_screen(phone: AdbPhone, android: StockAndroid) -> None:
    """AOSP 14: "ERROR: could not get idle state." on stderr, exit 0, the previous dump file left."""
    from devices.protocol import DeviceError

    phone.reset(CONTRACT_TASK)
    phone.act(OpenApp(app_name="Settings"))  # the dump file now shows Settings
    phone.act(OpenApp(app_name="Clock"))
    android.dump_idle_failures = 10  # more than the retries
    with pytest.raises(DeviceError, match="could not get idle state"):
        phone.act(Wait(seconds=1))  # an action ran, so the screen must be dumped again
    android.dump_idle_failures = 0
    assert phone.observe().foreground_app == "clock"


def test_a_tap_whose_connection_drops_is_not_sent_again(phone: AdbPhone, adbd: FakeAdbd) -> None:
    obs = phone.reset(CONTRACT_TASK)
    icon = next(i for i, e in enumerate(obs.screen) if e.text == "Clock")
    retried = phone.adb.retried
    adbd.drop_after_running(1)
    try:
        answer = phone.act(Click(index=icon))
        assert answer.result is not None and not answer.result.ok  # reported, not hidden
        assert "not sent again" in answer.result.error.message
    except DeviceLost as error:
        assert "failed 2 times" not in str(error)  # lost, but never by sending the tap twice
    assert sum(s.startswith("shell,v2:input tap") for s in adbd.services) == 1
    assert phone.adb.retried == retried  # the tap was not retried
