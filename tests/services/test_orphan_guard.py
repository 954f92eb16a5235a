"""services.orphan_guard: a service started through it stops cleanly once its parent dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# A stand-in service: SIGTERM is its clean stop (it writes `stopped`), else it runs for a minute.
SERVICE = textwrap.dedent("""
    import pathlib, signal, sys, time
    def stop(*_):
        (pathlib.Path(__file__).parent / "stopped").write_text("stopped")
        sys.exit(0)
    signal.signal(signal.SIGTERM, stop)
    time.sleep(60)
""")


def _parent(tmp_path: Path, *, guarded: bool, lives: float) -> tuple[int, bool]:
    """Runs a parent that starts the stand-in service (through the guard or not) and dies abruptly
    (os._exit, as a killed supervisor would) after `lives` seconds; returns the service's pid and
    whether it was still running, unstopped, just before its parent died."""
    (tmp_path / "standin.py").write_text(SERVICE)
    command = "['-m', 'services.orphan_guard', 'standin']" if guarded else f"[{str(tmp_path / 'standin.py')!r}]"
    script = textwrap.dedent(f"""
        import os, subprocess, sys, time
        child = subprocess.Popen([sys.executable, *{command}], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL,
                                 env={{**os.environ, "FLYWHEEL_PARENT_PID": str(os.getpid())}})
        time.sleep({lives})
        running = child.poll() is None and not os.path.exists({str(tmp_path / "stopped")!r})
        print(child.pid, running, flush=True)
        os._exit(0)
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(tmp_path)])}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60,
                          check=True)
    pid, running = done.stdout.split()
    return int(pid), running == "True"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is not running
        return stat.read().split(")")[-1].split()[0] != "Z"


def _wait_gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_a_guarded_service_stops_cleanly_once_its_parent_dies(tmp_path: Path) -> None:
    pid, running = _parent(tmp_path, guarded=True, lives=3.0)
    assert running  # the guard leaves it alone while the parent lives
    assert _wait_gone(pid, 15), "the guarded service outlived its parent"
    assert (tmp_path / "stopped").read_text() == "stopped"  # through its own SIGTERM handler


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_without_the_guard_the_orphan_keeps_running(tmp_path: Path) -> None:
    pid, running = _parent(tmp_path, guarded=False, lives=1.0)
    try:
        assert running
        assert not _wait_gone(pid, 3), "an unguarded child died with its parent: this test proves nothing"
        assert not (tmp_path / "stopped").exists()
    finally:
        os.kill(pid, signal.SIGKILL)


def test_the_guard_refuses_a_missing_module_argument() -> None:
    from services.orphan_guard import main

    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert "usage" in str(exit_info.value.code)
