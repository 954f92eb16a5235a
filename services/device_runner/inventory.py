"""What devices a runner could drive: the configured sim phones and the adb server's phones."""

from __future__ import annotations

import logging
import socket
from dataclasses import asdict, dataclass

from devices.adb.settings import AdbSettings
from services.device_runner.settings import DeviceRunnerSettings

__all__ = [
    "DeviceEntry",
    "Inventory",
    "adb_devices",
    "adb_server_answers",
    "list_devices",
    "sim_devices",
]

logger = logging.getLogger(__name__)

#: Probing the adb port on loopback answers in microseconds; a second covers a remote host.
ADB_PROBE_TIMEOUT_S = 1.0
#: Listing devices is one short request; a server that takes longer is not usable anyway.
ADB_LIST_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class DeviceEntry:
    """One device a runner could serve."""

    device_id: str
    kind: str  # "sim" or "adb"
    state: str  # "available" for sims; the adb state ("device", "offline", "unauthorized") for phones
    detail: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class Inventory:
    """Every device found, plus a note when part of the search could not run."""

    devices: tuple[DeviceEntry, ...]
    note: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {"devices": [d.to_dict() for d in self.devices], "note": self.note}


def sim_devices(settings: DeviceRunnerSettings) -> list[DeviceEntry]:
    """sim-0 … sim-N-1: simulated phones are created on demand, so all are available."""
    return [DeviceEntry(f"sim-{i}", "sim", "available", "SimPhone (in-process sandbox)")
            for i in range(settings.sim_devices)]


def adb_server_answers(adb: AdbSettings, timeout_s: float = ADB_PROBE_TIMEOUT_S) -> bool:
    """True when something accepts connections on the adb server's port.

    Probed with a plain socket first because adbutils starts an adb daemon by itself when it
    cannot connect, and listing devices must not start anything.
    """
    try:
        with socket.create_connection((adb.host, adb.port), timeout=timeout_s):
            return True
    except OSError:
        return False


def adb_devices(adb: AdbSettings) -> list[DeviceEntry]:
    """The phones the adb server lists (call only after `adb_server_answers`)."""
    from devices.adb.client import NoSpawnClient  # only when a server is there

    client = NoSpawnClient(adb.host, adb.port, ADB_LIST_TIMEOUT_S)
    return [DeviceEntry(info.serial, "adb", info.state, f"adb server {adb.host}:{adb.port}")
            for info in client.list()]


def list_devices(settings: DeviceRunnerSettings, adb: AdbSettings) -> Inventory:
    """Sim devices, then adb devices when an adb server answers (else a one-line note)."""
    found = sim_devices(settings)
    if not adb_server_answers(adb):
        return Inventory(tuple(found), note=(
            f"no adb server is running at {adb.host}:{adb.port}, so only sim devices are listed; "
            f"run `adb start-server` (or set FLYWHEEL_ADB_HOST/FLYWHEEL_ADB_PORT) to see phones"))
    from adbutils.errors import AdbError

    try:
        found.extend(adb_devices(adb))
    except (AdbError, OSError) as error:
        return Inventory(tuple(found), note=(
            f"the adb server at {adb.host}:{adb.port} did not list its devices ({error}); "
            f"restart it with `adb kill-server && adb start-server`"))
    return Inventory(tuple(found))
