"""`python -m services.adb_server`: the only way Flywheel starts an adb server, and adb commands
against the configured one."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from services.adb_server.__main__ import adb_binary, main
from tests.devices.fake_adbd import RealAdbServer, StockAndroid, stock_device


def test_without_a_command_it_prints_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "serve" in capsys.readouterr().err


def test_the_binary_is_the_wheels_adb() -> None:
    said = subprocess.run([str(adb_binary()), "version"], capture_output=True, check=True)
    assert b"Android Debug Bridge" in said.stdout


def test_adb_commands_go_to_the_configured_server() -> None:
    with RealAdbServer() as server, stock_device(StockAndroid()) as daemon:
        done = subprocess.run([sys.executable, "-m", "services.adb_server", "adb", "connect",
                               daemon.serial], capture_output=True, env={
                                   **server.env, "FLYWHEEL_ADB_PORT": str(server.port)},
                              timeout=30, check=False)
        assert done.returncode == 0, done.stderr
        deadline = time.monotonic() + 20
        while server.state(daemon.serial) != "device" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert server.state(daemon.serial) == "device"
