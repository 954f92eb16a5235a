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
import signal
import subprocess
import sys
import threading
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


#: Seconds the adb server gets to stop after SIGTERM before it is killed.
STOP_GRACE_S = 5.0


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the adb server gets SIGTERM when this wrapper dies, even by SIGKILL."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def serve(command: list[str]) -> int:
    """Runs the adb server as a child that never outlives this process: SIGTERM and Ctrl-C stop
    it (SIGKILL after STOP_GRACE_S), the orphan guard stops it when our parent dies, and the
    kernel sends it SIGTERM when this process dies however it dies (PR_SET_PDEATHSIG)."""
    from services.orphan_guard import PARENT_ENV, watch_parent

    # No thread runs yet (the guard starts below), so the fork-then-prctl hook is safe here.
    child = subprocess.Popen(command, preexec_fn=_die_with_parent)  # noqa: PLW1509
    stopping = threading.Event()

    def stop(*_: object) -> None:
        stopping.set()
        if child.poll() is None:
            child.terminate()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    watch_parent(int(os.environ.get(PARENT_ENV) or os.getppid()))
    while True:
        try:
            code = child.wait(STOP_GRACE_S if stopping.is_set() else None)
            break
        except subprocess.TimeoutExpired:
            child.kill()
    return 0 if stopping.is_set() else code


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
        return serve(command)
    return subprocess.call([binary, "-H", settings.host, "-P", str(settings.port), *argv[1:]])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
