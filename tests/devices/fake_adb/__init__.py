"""A protocol-level fake adb server backed by SimPhones, so tests drive the real adbutils client."""

from __future__ import annotations

from tests.devices.fake_adb.server import FakeAdbServer
from tests.devices.fake_adb.shell import FakeDevice

__all__ = ["FakeAdbServer", "FakeDevice"]
