"""A device that is not ours: a fake adbd (the device side of the adb wire protocol) answering as
stock Android does, reached through the real adb server binary with `adb connect`."""

from __future__ import annotations

from tests.devices.fake_adbd.adb_server import RealAdbServer
from tests.devices.fake_adbd.android import StockAndroid
from tests.devices.fake_adbd.daemon import FakeAdbd

__all__ = ["FakeAdbd", "RealAdbServer", "StockAndroid", "stock_device"]


def stock_device(android: StockAndroid | None = None, *, port: int = 0,
                 features: str | None = None) -> FakeAdbd:
    """A fake adbd whose shell and files are those of `android` (a fresh stock phone by default)."""
    android = android or StockAndroid()
    if features is None:
        return FakeAdbd(android.run, android.files, port=port)
    return FakeAdbd(android.run, android.files, port=port, features=features)
