"""Wiring: the archiver for a bootstrap and settings, and a stop flag for signals and deadlines."""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from schemas.topics import TOPICS, Topic
from services.archiver.loop import Archiver
from services.archiver.settings import ArchiverSettings
from services.archiver.sources import ArchiverSource
from services.archiver.store import ArchiveStore
from streams.consumer import TypedBatchConsumer

__all__ = ["StopFlag", "build_archiver", "loss_bound"]

logger = logging.getLogger(__name__)


def build_archiver(bootstrap: str, settings: ArchiverSettings, archive_dir: Path,
                   topics: Sequence[Topic] | None = None, *, data_dir: Path | None = None,
                   **kafka_kwargs: Any) -> tuple[Archiver, TypedBatchConsumer]:
    """An archiver over `topics` (default: every registered topic) and its source (close it);
    a rebalance's revoked partitions reach the archiver, which drops their buffered rows."""
    chosen = list(topics) if topics is not None else list(TOPICS.values())
    holder: list[Archiver] = []
    source = ArchiverSource(bootstrap, chosen, settings.group_id,
                            include_dead_letters=settings.include_dead_letters,
                            on_revoked=lambda tps: holder[0].revoked(tps) if holder else None,
                            data_dir=data_dir, **kafka_kwargs)
    try:
        holder.append(Archiver(source, ArchiveStore(archive_dir), settings))
        return holder[0], source
    except BaseException:
        source.close()
        raise


def loss_bound(settings: ArchiverSettings) -> str:
    """The most a crash can lose from the archive, in words."""
    return (f"a crash can lose at most the last {settings.flush_interval_s:g} s / "
            f"{settings.flush_max_events:,} events")


class StopFlag:
    """Set by SIGINT/SIGTERM or when an optional deadline passes; the loop polls it."""

    def __init__(self, duration_s: float | None = None) -> None:
        self._event = threading.Event()
        self.reason: str | None = None
        self._deadline = time.monotonic() + duration_s if duration_s is not None else None
        self._previous: dict[int, object] = {}

    def __call__(self) -> bool:
        if self._deadline is not None and time.monotonic() >= self._deadline and not self.reason:
            self.set("duration reached")
        return self._event.is_set()

    def set(self, reason: str) -> None:
        self.reason = self.reason or reason
        self._event.set()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self._event.is_set():  # a second Ctrl-C: say what is happening, keep stopping cleanly
            logger.warning("already stopping (%s): services finish their current step, then the "
                           "archive drains", self.reason)
        self.set(signal.Signals(signum).name)

    def install(self) -> StopFlag:
        """Routes SIGINT and SIGTERM to this flag (main thread only) until `restore()`."""
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self._on_signal)
        return self

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]
        self._previous.clear()
