"""The adb call module over the real adbutils client: shell v2, sync pull, retries, device loss."""

from __future__ import annotations

from pathlib import Path

import pytest

from devices.adb.client import AdbCall
from devices.protocol import DeviceError, DeviceLost
from tests.devices.adb.conftest import SERIAL, make_settings
from tests.devices.fake_adb import FakeAdbServer


def test_shell_v2_returns_stdout_stderr_and_exit_code(bare_adb: AdbCall) -> None:
    ok = bare_adb.shell(["echo", "hello world"])
    assert (ok.exit_code, ok.text) == (0, "hello world\n")
    missing = bare_adb.shell(["frobnicate"])
    assert missing.exit_code == 127
    assert "frobnicate" in missing.error_text and missing.stdout == b""


def test_arguments_are_shell_quoted(bare_adb: AdbCall, bare_server: FakeAdbServer) -> None:
    out = bare_adb.shell(["echo", "a;b && c 'd'"])
    assert out.text == "a;b && c 'd'\n"
    assert bare_server.shell_commands(SERIAL) == ["echo 'a;b && c '\"'\"'d'\"'\"''"]


def test_transport_uses_tport_with_server_version_41(bare_adb: AdbCall,
                                                     bare_server: FakeAdbServer) -> None:
    bare_adb.shell(["true"])
    assert f"host:tport:serial:{SERIAL}" in bare_server.requests
    assert "host:version" in bare_server.requests


def test_old_server_version_selects_transport_by_serial(tmp_path: Path) -> None:
    from tests.devices.fake_adb import FakeDevice
    with FakeAdbServer({SERIAL: FakeDevice(None)}, version=40) as server:
        AdbCall(make_settings(server, tmp_path)).shell(["true"])
        assert f"host:transport:{SERIAL}" in server.requests
        assert not any(r.startswith("host:tport") for r in server.requests)


def test_pull_reads_a_file_over_sync(bare_adb: AdbCall, bare_server: FakeAdbServer) -> None:
    payload = bytes(range(256)) * 600  # > 64 KiB: several DATA chunks
    bare_server.devices[SERIAL].files["/sdcard/blob.bin"] = payload
    assert bare_adb.pull("/sdcard/blob.bin") == payload


def test_pull_of_a_missing_file_is_a_device_error_not_a_loss(bare_adb: AdbCall) -> None:
    with pytest.raises(DeviceError) as caught:
        bare_adb.pull("/sdcard/nope.xml")
    assert not isinstance(caught.value, DeviceLost)
    assert "does not exist" in str(caught.value)


def test_idempotent_call_is_retried_after_a_timeout(bare_server: FakeAdbServer,
                                                    tmp_path: Path) -> None:
    adb = AdbCall(make_settings(bare_server, tmp_path, call_timeout_s=0.3))
    bare_server.stall(SERIAL, seconds=1.0, count=1)
    out = adb.shell(["echo", "late"], idempotent=True)
    assert out.text == "late\n"
    assert adb.retried == 1


def test_non_idempotent_timeout_is_not_repeated(bare_server: FakeAdbServer,
                                                tmp_path: Path) -> None:
    adb = AdbCall(make_settings(bare_server, tmp_path, call_timeout_s=0.3))
    bare_server.stall(SERIAL, seconds=1.0, count=1)
    with pytest.raises(DeviceError) as caught:
        adb.shell(["input", "tap", "1", "2"], idempotent=False)
    assert not isinstance(caught.value, DeviceLost)
    assert "may have run" in str(caught.value)
    sent = [r for r in bare_server.requests if r.endswith("input tap 1 2")]
    assert sent == ["shell,v2:input tap 1 2"]


def test_device_that_never_answers_is_lost_after_all_retries(bare_server: FakeAdbServer,
                                                             tmp_path: Path) -> None:
    adb = AdbCall(make_settings(bare_server, tmp_path, call_timeout_s=0.3, retries=1))
    bare_server.stall(SERIAL, seconds=1.0, count=5)
    with pytest.raises(DeviceLost, match="stopped answering"):
        adb.shell(["echo", "x"], idempotent=True)
    assert adb.calls == 2


def test_unplugged_device_raises_device_lost(bare_adb: AdbCall,
                                             bare_server: FakeAdbServer) -> None:
    bare_adb.shell(["true"])
    bare_server.disappear(SERIAL)
    with pytest.raises(DeviceLost) as caught:
        bare_adb.shell(["true"])
    assert SERIAL in str(caught.value) and "\n" not in str(caught.value)
    assert not bare_adb.is_present()


def test_device_that_comes_back_within_the_retries_is_not_lost(bare_server: FakeAdbServer,
                                                               tmp_path: Path) -> None:
    slept: list[float] = []

    def replug(seconds: float) -> None:
        slept.append(seconds)
        bare_server.reappear(SERIAL)

    adb = AdbCall(make_settings(bare_server, tmp_path, retry_backoff_s=0.25), sleep=replug)
    bare_server.disappear(SERIAL)
    assert adb.shell(["echo", "back"]).text == "back\n"
    assert slept == [0.25]


def test_server_that_is_down_raises_device_lost(tmp_path: Path) -> None:
    with FakeAdbServer({}) as server:
        settings = make_settings(server, tmp_path, retries=0)
    adb = AdbCall(settings)
    with pytest.raises(DeviceLost):
        adb.shell(["true"])


def test_serial_is_resolved_when_only_one_device_is_attached(bare_server: FakeAdbServer,
                                                             tmp_path: Path) -> None:
    adb = AdbCall(make_settings(bare_server, tmp_path, serial=None))
    assert adb.serial == SERIAL


def test_the_sentences_say_what_is_wrong_with_the_phone(bare_server: FakeAdbServer,
                                                        tmp_path: Path) -> None:
    """One offline phone is named as offline (not "found 0"), and the advice for a server
    that does not answer names the configured port."""
    bare_server.offline.add(SERIAL)
    with pytest.raises(DeviceLost, match=rf"{SERIAL} is offline.*unlock the phone"):
        _ = AdbCall(make_settings(bare_server, tmp_path, serial=None)).serial
    assert AdbCall(make_settings(bare_server, tmp_path)).state() == "offline"
    with FakeAdbServer({}) as empty:
        with pytest.raises(DeviceLost, match="no device is attached"):
            _ = AdbCall(make_settings(empty, tmp_path, serial=None)).serial
        port, settings = empty.port, make_settings(empty, tmp_path, retries=0)
    down = AdbCall(settings)
    with pytest.raises(DeviceLost, match=rf"adb -P {port} start-server"):
        down.devices()
