"""Runs the adb server for phone runners, or one adb command against it.

The binary is the one that ships in the adbutils wheel. Nothing else in Flywheel starts an adb
server: the runners only connect to FLYWHEEL_ADB_HOST:FLYWHEEL_ADB_PORT and report a lost
device when nothing answers. How to run:

    python -m services.adb_server serve [--all-interfaces]   # foreground server on FLYWHEEL_ADB_PORT
    python -m services.adb_server adb connect 192.168.1.20:5555   # a phone over the network
    python -m services.adb_server adb devices -l                  # what the server sees
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

from devices.adb.settings import load_adb_settings
from schemas.settings import SettingsError

__all__ = ["adb_binary", "main"]

logger = logging.getLogger(__name__)

USAGE = ("usage: python -m services.adb_server serve [--all-interfaces] | "
         "python -m services.adb_server adb ARGS...")


def adb_binary() -> Path:
    """The adb executable inside the adbutils wheel (its exec bit restored if an install lost it)."""
    import adbutils

    path = Path(adbutils.__file__).parent / "binaries" / "adb"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; reinstall adbutils (pip install "
                                f"--force-reinstall adbutils)")
    if not os.access(path, os.X_OK):
        path.chmod(path.stat().st_mode | 0o111)
    return path


def main(argv: list[str]) -> int:
    try:
        settings = load_adb_settings()
    except SettingsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if not argv or argv[0] not in ("serve", "adb"):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        binary = str(adb_binary())
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if argv[0] == "serve":
        listen = ["-a"] if "--all-interfaces" in argv[1:] else []
        command = [binary, *listen, "-P", str(settings.port), "nodaemon", "server"]
        print(f"adb server on port {settings.port}"
              f"{' (all interfaces)' if listen else ' (loopback)'}", file=sys.stderr)
        return subprocess.call(command)
    return subprocess.call([binary, "-H", settings.host, "-P", str(settings.port), *argv[1:]])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
