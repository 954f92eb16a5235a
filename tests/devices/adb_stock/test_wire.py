"""The adb wire through the real server to the fake adbd: shell v1 and v2, an old phone without
shell v2, and sync transfers larger than one WRTE message."""

from __future__ import annotations

from pathlib import Path

from devices.adb.client import AdbCall, NoSpawnClient
from tests.devices.adb_stock.conftest import stock_settings
from tests.devices.fake_adbd import FakeAdbd, RealAdbServer, StockAndroid, stock_device


def test_shell_v2_keeps_stdout_stderr_and_exit_code(adb_server: RealAdbServer, adbd: FakeAdbd,
                                                    tmp_path: Path) -> None:
    adb = AdbCall(stock_settings(adb_server, adbd.serial, tmp_path))
    out = adb.shell("echo hi; frobnicate")
    assert (out.text, out.exit_code) == ("hi\n", 127)
    assert "frobnicate" in out.error_text
    assert adbd.services[-1] == "shell,v2:echo hi; frobnicate"


def test_shell_v1_is_the_raw_stream(adb_server: RealAdbServer, adbd: FakeAdbd) -> None:
    device = NoSpawnClient("127.0.0.1", adb_server.port, 5).device(serial=adbd.serial)
    assert device.shell("echo plain") == "plain"
    assert adbd.services[-1] == "shell:echo plain"


def test_an_old_phone_without_shell_v2_still_reports_exit_codes(
        adb_server: RealAdbServer, tmp_path: Path) -> None:
    with stock_device(StockAndroid(sdk=23), features="cmd,stat_v2") as old:
        adb_server.connect(old.serial)
        adb = AdbCall(stock_settings(adb_server, old.serial, tmp_path))
        out = adb.shell(["settings", "get", "global", "wifi_on"])
        assert (out.text, out.exit_code) == ("1\n", 0)
        assert adb.shell(["false"]).exit_code == 1
        assert not any(s.startswith("shell,v2") for s in old.services)
    adb_server.adb("disconnect", old.serial)


def test_sync_moves_files_larger_than_one_message(adb_server: RealAdbServer, adbd: FakeAdbd,
                                                  tmp_path: Path) -> None:
    adb = AdbCall(stock_settings(adb_server, adbd.serial, tmp_path))
    payload = bytes(range(256)) * 3000  # 750 KiB: several sync DATA chunks and WRTE messages
    adb.push(payload, "/sdcard/Download/big.bin")
    assert adbd.files["/sdcard/Download/big.bin"] == payload
    assert adb.pull("/sdcard/Download/big.bin") == payload
