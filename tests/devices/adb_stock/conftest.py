"""Fixtures for the stock-phone tests: the real adb server binary on a private port, and a fake
adbd answering as stock Android, attached with `adb connect` (no SimPhone anywhere)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from devices.adb.phone import AdbPhone
from devices.adb.settings import AdbSettings
from tests.devices.adb_settings import adb_test_settings
from tests.devices.fake_adbd import FakeAdbd, RealAdbServer, StockAndroid, stock_device


@pytest.fixture(scope="session")
def adb_server() -> Iterator[RealAdbServer]:
    """One real adb server for the session, in a temp HOME, on a free port; stopped at the end."""
    with RealAdbServer() as server:
        yield server


@pytest.fixture
def android() -> StockAndroid:
    """A stock phone that already holds its owner's data (one contact)."""
    phone = StockAndroid()
    phone.add_contact("Mum", "+1-555-010-0001", starred=True)
    return phone


@pytest.fixture
def adbd(adb_server: RealAdbServer, android: StockAndroid) -> Iterator[FakeAdbd]:
    with stock_device(android) as daemon:
        adb_server.connect(daemon.serial)
        yield daemon
    adb_server.adb("disconnect", daemon.serial)


def stock_settings(server: RealAdbServer, serial: str, blob_dir: Path,
                   **overrides: object) -> AdbSettings:
    return adb_test_settings(server.port, blob_dir, **{"serial": serial, "profile": "stock", "retries": 1,
                                                       **overrides})


@pytest.fixture
def phone(adb_server: RealAdbServer, adbd: FakeAdbd, tmp_path: Path) -> Iterator[AdbPhone]:
    device = AdbPhone(adbd.serial, settings=stock_settings(adb_server, adbd.serial,
                                                           tmp_path / "blobs"))
    yield device
    device.close()
