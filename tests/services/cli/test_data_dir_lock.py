"""One run per data dir: a second `flywheel run` on a data dir another live process holds is
refused in one sentence naming that process, before it touches a broker; a holder killed with
-9 leaves no stale lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from services.cli.data_dir_lock import LOCK_FILE, DataDirBusy, hold_data_dir
from services.cli.main import app

HOLDER = ("import sys, time; from pathlib import Path; from services.cli.data_dir_lock import hold_data_dir\n"
          "with hold_data_dir(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(60)\n")


def _holder(data_dir: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen([sys.executable, "-c", HOLDER, str(data_dir)], stdout=subprocess.PIPE,
                               text=True, cwd=Path(__file__).resolve().parents[3])
    assert process.stdout is not None and process.stdout.readline().strip() == "held"
    return process


def test_a_second_run_on_a_held_data_dir_is_refused_naming_the_holder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    holder = _holder(tmp_path)
    try:
        monkeypatch.setenv("FLYWHEEL_DATA_DIR", str(tmp_path))
        monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:1")  # never reached
        started = time.monotonic()
        result = CliRunner().invoke(app, ["run", "--duration", "1", "--examples", "0",
                                          "--generations", "0"])
        said = " ".join(result.output.split())
        assert result.exit_code == 1, result.output
        assert f"another flywheel run (pid {holder.pid}) is using the data dir" in said
        assert "Traceback" not in result.output and time.monotonic() - started < 10
    finally:
        holder.kill()
        holder.wait()


def test_a_holder_killed_with_sigkill_leaves_no_stale_lock(tmp_path: Path) -> None:
    holder = _holder(tmp_path)
    with pytest.raises(DataDirBusy, match=str(holder.pid)), hold_data_dir(tmp_path):
        pass
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert (tmp_path / LOCK_FILE).exists()  # the file stays; the kernel dropped the lock
    with hold_data_dir(tmp_path):
        assert (tmp_path / LOCK_FILE).read_text().strip() == str(os.getpid())
