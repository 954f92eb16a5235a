"""Runs device calls on one worker thread with a deadline, so a hung phone cannot hang the runner."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar

__all__ = ["ActionGuard", "ActionTimedOut", "DeviceBusy"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


class ActionTimedOut(TimeoutError):
    """A device call ran past its deadline (it may still be running on the worker thread)."""


class DeviceBusy(RuntimeError):
    """An earlier call that timed out is still running on the device; nothing new can start."""


class ActionGuard:
    """Calls `fn()` on a single worker thread and waits at most `timeout_s` (None: call inline)."""

    def __init__(self, timeout_s: float | None) -> None:
        self.timeout_s = timeout_s
        self._pool: ThreadPoolExecutor | None = None
        self._pending: Future[object] | None = None

    def call(self, fn: Callable[[], T], what: str) -> T:
        if self.timeout_s is None:
            return fn()
        if self._pending is not None and not self._pending.done():
            raise DeviceBusy(f"the device is still busy with an earlier call that timed out; "
                             f"{what} was not started")
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="device-call")
        future = self._pool.submit(fn)
        try:
            return future.result(timeout=self.timeout_s)
        except FutureTimeout:
            self._pending = future  # type: ignore[assignment]
            raise ActionTimedOut(f"{what} took longer than {self.timeout_s:g} s") from None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
