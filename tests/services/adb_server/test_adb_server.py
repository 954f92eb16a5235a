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


def _answers(port: int) -> bool:
    import socket

    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT", "SIGKILL"])
def test_serve_never_leaves_its_adb_server_behind(how: str) -> None:
    """The wrapper stops its adb server on SIGTERM and Ctrl-C, and the server dies with the wrapper
    even when the wrapper is killed (nothing left listening on the port)."""
    import os
    import signal

    from streams.broker import free_port

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLYWHEEL_")}
    wrapper = subprocess.Popen([sys.executable, "-m", "services.adb_server", "serve"],
                               env={**env, "FLYWHEEL_ADB_PORT": str(port)}, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not _answers(port):
            assert wrapper.poll() is None and time.monotonic() < deadline, "the adb server did not start"
            time.sleep(0.2)
        wrapper.send_signal(getattr(signal, how))
        wrapper.wait(15)
        deadline = time.monotonic() + 10
        while _answers(port):
            assert time.monotonic() < deadline, f"the adb server outlived its wrapper ({how})"
            time.sleep(0.2)
    finally:
        if wrapper.poll() is None:
            wrapper.kill()
