"""Ctrl-C and SIGTERM set the run's stop flag; pressing Ctrl-C again while the run stops only
says so, and never raises KeyboardInterrupt in the main thread."""

from __future__ import annotations

import logging
import os
import signal
import time

import pytest

from services.archiver.service import StopFlag


def test_a_second_ctrl_c_keeps_stopping_cleanly(caplog: pytest.LogCaptureFixture) -> None:
    # What was there before: Python's default handler, or SIG_IGN when the suite runs as a
    # background job of a non-interactive shell (which starts it with SIGINT ignored).
    before = signal.getsignal(signal.SIGINT)
    flag = StopFlag().install()
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
        assert flag() and flag.reason == "SIGINT"
        with caplog.at_level(logging.WARNING):
            os.kill(os.getpid(), signal.SIGINT)  # would be KeyboardInterrupt without the flag
            time.sleep(0.05)
        assert "already stopping (SIGINT)" in caplog.text
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)
        assert flag.reason == "SIGINT"  # the first reason is the one reported
    finally:
        flag.restore()
    assert signal.getsignal(signal.SIGINT) is before


def test_the_deadline_stops_the_run() -> None:
    flag = StopFlag(duration_s=0.0)
    assert flag() and flag.reason == "duration reached"
