"""The archiver's thin loop: poll batches, buffer new rows, write Parquet, then commit offsets."""

from __future__ import annotations

import gc
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

import pyarrow as pa
import pyarrow.compute as pc

from services.archiver.rows import ArchivableRecord, new_rows, to_table
from services.archiver.settings import ArchiverSettings
from services.archiver.store import ArchiveStore

__all__ = ["Archiver", "ArchiverStats", "RecordSource"]

logger = logging.getLogger(__name__)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block (it is restored after, as it was).

    A step makes tens of thousands of short-lived, acyclic objects (records, decoded events)
    that reference counting frees when the step ends; left on, the collector rescans the
    growing batch many times per step (measured: ~20% of the archiver's time). Any cycle made
    meanwhile is collected after the step, so garbage stays bounded by one batch.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class RecordSource(Protocol):
    """A batch source with explicit commits (streams.consumer.TypedBatchConsumer fits)."""

    def poll_batch(self, timeout_ms: int) -> Sequence[ArchivableRecord]: ...

    def commit(self) -> None: ...


@dataclass
class ArchiverStats:
    """Running counts for the live status line and the final summary."""

    started_at: float = field(default_factory=time.monotonic)
    polled: int = 0
    duplicates: int = 0
    archived: Counter[str] = field(default_factory=Counter)
    flushes: int = 0
    files: int = 0
    last_flush_at: float | None = None  # time.monotonic() of the last flush

    @property
    def archived_total(self) -> int:
        return sum(self.archived.values())

    def rate(self, now: float | None = None) -> float:
        """Archived events per second since start."""
        elapsed = (now if now is not None else time.monotonic()) - self.started_at
        return self.archived_total / elapsed if elapsed > 0 else 0.0


class Archiver:
    """Sinks records from `source` into `store`, exactly once per event id.

    Files are written (atomically) before the source commits, so a crash anywhere re-delivers
    at most the unflushed records; re-delivered or replayed events are recognised by their
    event id, loaded from the archive at start, and skipped.
    """

    def __init__(self, source: RecordSource, store: ArchiveStore, settings: ArchiverSettings,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.source = source
        self.store = store
        self.settings = settings
        self.clock = clock
        self.store.clean_tmp()
        self.seen: set[str] = store.event_ids()
        self.stats = ArchiverStats(started_at=clock())
        # Each step's new rows become an Arrow table at once: the buffer then holds no Python
        # objects per row, so memory stays near the payload size and the GC has little to scan.
        self._buffer: list[pa.Table] = []
        self._buffered_rows = 0
        self._buffer_ids: set[str] = set()
        self._last_flush = clock()
        logger.info("archiver starts with %d archived events under %s", len(self.seen),
                    store.root)

    @property
    def buffered(self) -> int:
        return self._buffered_rows

    def flush_due(self) -> bool:
        return (self._buffered_rows >= self.settings.flush_max_events
                or self.clock() - self._last_flush >= self.settings.flush_interval_s)

    def step(self) -> int:
        """Polls one batch, buffers its new rows and flushes if due; returns records polled."""
        with _gc_paused():
            count = self._take(self.source.poll_batch(self.settings.poll_timeout_ms))
        if self.flush_due():
            self.flush()
        return count

    def _take(self, records: Sequence[ArchivableRecord]) -> int:
        """Buffers the new rows of one polled batch as an Arrow table; returns len(records)."""
        if records:
            buffer_ids = self._buffer_ids
            fresh = [row for row in new_rows(records, self.seen)
                     if row.event_id not in buffer_ids]
            if fresh:
                self._buffer.append(to_table(fresh, archived_at_ms=0))  # stamped at flush
                buffer_ids.update([row.event_id for row in fresh])
                self._buffered_rows += len(fresh)
            self.stats.polled += len(records)
            self.stats.duplicates += len(records) - len(fresh)
        return len(records)

    def flush(self) -> int:
        """Writes the buffer, then commits the source's offsets; returns rows written."""
        rows = self._buffered_rows
        if rows:
            table = _stamped(pa.concat_tables(self._buffer), int(time.time() * 1000))
            self.stats.files += len(self.store.write(table))
            self.seen.update(self._buffer_ids)
            counts = pc.value_counts(table["topic"])
            self.stats.archived.update(dict(zip(counts.field("values").to_pylist(),
                                                counts.field("counts").to_pylist(), strict=True)))
            self.stats.flushes += 1
        self.source.commit()  # after the write: offsets never run ahead of the archive
        self._buffer = []
        self._buffered_rows = 0
        self._buffer_ids = set()
        self._last_flush = self.clock()
        self.stats.last_flush_at = self._last_flush
        return rows

    def run(self, should_stop: Callable[[], bool],
            on_step: Callable[[Archiver], None] | None = None) -> ArchiverStats:
        """Steps until `should_stop()` is true, then flushes what is buffered.

        An exception propagates without a flush, like a crash: the unflushed records were not
        committed, so the next run re-reads them.
        """
        while not should_stop():
            self.step()
            if on_step is not None:
                on_step(self)
        self.flush()
        return self.stats


def _stamped(table: pa.Table, archived_at_ms: int) -> pa.Table:
    """`table` with every row's archived_at_ms set to the flush time."""
    index = table.schema.get_field_index("archived_at_ms")
    stamp = pa.repeat(pa.scalar(archived_at_ms, pa.int64()), table.num_rows)
    return table.set_column(index, table.schema.field(index), stamp)
