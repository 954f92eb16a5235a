"""One run per data dir: `flywheel run` holds an exclusive lock on `<data_dir>/run.lock`.

Two runs on one data dir split the consumer groups and the SQLite stores between them: one
issue measured a curator crashing in the other's half and the survivor making no progress for
six minutes. The lock is an `flock` on an open file, so the kernel drops it when the holder
exits for any reason (kill -9 included) and no stale lock is ever left to clear by hand; the
file names the holder's pid so the refusal can say who holds it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["LOCK_FILE", "DataDirBusy", "hold_data_dir"]

LOCK_FILE = "run.lock"


class DataDirBusy(RuntimeError):
    """Another live process holds the data dir."""


@contextlib.contextmanager
def hold_data_dir(data_dir: Path) -> Iterator[Path]:
    """Holds the data dir's run lock for the block; DataDirBusy (one sentence naming the other
    run's pid) when another process holds it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / LOCK_FILE
    handle = path.open("a+", encoding="utf-8")
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            raise DataDirBusy(
                f"another flywheel run (pid {holder}) is using the data dir {data_dir}; stop it "
                f"first, or give this run its own folder with FLYWHEEL_DATA_DIR") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield path
    finally:
        handle.close()  # closing the file releases the lock
