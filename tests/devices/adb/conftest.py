"""Fixtures for the adb runner tests: no real adb server is ever spawned, a fake one is served."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# adbutils runs `adb start-server` when it cannot connect, and no code path of ours may let it.
# Rather than hide that with /bin/false, the adb it would run records the attempt and every
# test here fails if it happened. ADB_MDNS=0 keeps any adb from probing the network.
_SPAWN_DIR = Path(tempfile.mkdtemp(prefix="flywheel-adb-spawn-"))
SPAWN_MARKER = _SPAWN_DIR / "adb-start-server-was-run"
_RECORDER = _SPAWN_DIR / "adb"
_RECORDER.write_text(f"#!/bin/sh\necho \"$@\" >> {SPAWN_MARKER}\nexit 1\n")
_RECORDER.chmod(0o755)
os.environ["ADBUTILS_ADB_PATH"] = str(_RECORDER)
os.environ["ADB_MDNS"] = "0"

from devices.adb.client import AdbCall
from devices.adb.settings import AdbSettings
from tests.devices.adb_settings import adb_test_settings
from tests.devices.fake_adb import FakeAdbServer, FakeDevice

SERIAL = "emulator-5554"


def make_settings(server: FakeAdbServer, blob_dir: Path, **overrides: object) -> AdbSettings:
    return adb_test_settings(server.port, blob_dir, **{"serial": SERIAL, "profile": "companion", **overrides})


@pytest.fixture(autouse=True)
def _nothing_starts_an_adb_server() -> Iterator[None]:
    yield
    assert not SPAWN_MARKER.exists(), (
        f"adbutils tried to start an adb server: {SPAWN_MARKER.read_text().strip()}")


@pytest.fixture
def bare_server() -> Iterator[FakeAdbServer]:
    """A fake adb server with one device that has no phone behind it (files and echo only)."""
    with FakeAdbServer({SERIAL: FakeDevice(None)}) as server:
        yield server


@pytest.fixture
def bare_adb(bare_server: FakeAdbServer, tmp_path: Path) -> AdbCall:
    return AdbCall(make_settings(bare_server, tmp_path / "blobs"))
