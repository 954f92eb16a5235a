"""Runs a service module as `python -m MODULE` would, stopping it when its parent process dies.

    python -m services.orphan_guard services.verifier

`flywheel run` starts its data services through this launcher. Without it, a supervisor that
dies without stopping them (the OOM killer, SIGKILL) leaves its services running and consuming
with nobody watching them. The guard takes the parent's pid from `FLYWHEEL_PARENT_PID` (set by
the parent, so a parent that dies before the child starts is still noticed; else the pid at
start-up) and checks every `CHECK_S` seconds; once the process has been re-parented (the
parent is gone), it sends itself SIGTERM, which every service already handles as a clean stop
(offsets committed, logs flushed).
"""

from __future__ import annotations

import logging
import os
import runpy
import signal
import sys
import threading
import time

__all__ = ["CHECK_S", "PARENT_ENV", "watch_parent"]

logger = logging.getLogger(__name__)

#: How often the parent is checked (seconds): a few os.getppid() calls a second cost nothing.
CHECK_S = 0.5
#: The variable a parent sets to its own pid for the guard.
PARENT_ENV = "FLYWHEEL_PARENT_PID"


def watch_parent(parent: int, *, every: float = CHECK_S) -> threading.Thread:
    """A daemon thread that sends this process SIGTERM once its parent is no longer `parent`."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        logger.warning("the parent process (pid %d) is gone; stopping", parent)
        os.kill(os.getpid(), signal.SIGTERM)

    thread = threading.Thread(target=watch, name="orphan-guard", daemon=True)
    thread.start()
    return thread


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.exit("usage: python -m services.orphan_guard MODULE (the service module to run)")
    watch_parent(int(os.environ.get(PARENT_ENV) or os.getppid()))
    sys.argv = [args[0]]
    runpy.run_module(args[0], run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
