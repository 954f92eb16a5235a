"""The archiver's thin loop: poll batches, buffer new rows, write Parquet, then commit offsets."""

from __future__ import annotations

import gc
import logging
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc

from services.archiver.rows import ArchivableRecord, to_row, to_table
from services.archiver.settings import ArchiverSettings
from services.archiver.store import ArchiveStore

__all__ = ["Archiver", "ArchiverStats", "RecentIds", "RecordSource"]

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


class RecentIds(AbstractSet[str]):
    """A bounded set of tracking keys: the newest `limit` added, the oldest forgotten first."""

    def __init__(self, limit: int, ids: Iterable[str] = ()) -> None:
        self.limit = limit
        self._order: deque[str] = deque()
        self._set: set[str] = set()
        self.extend(ids)

    def __contains__(self, key: object) -> bool:
        return key in self._set

    def __len__(self) -> int:
        return len(self._set)

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def extend(self, ids: Iterable[str]) -> None:
        order, members = self._order, self._set
        for key in ids:
            if key not in members:
                members.add(key)
                order.append(key)
        while len(order) > self.limit:
            members.discard(order.popleft())


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
    """Sinks records from `source` into `store`, exactly once per record.

    Files are written (atomically) before the source commits, so a crash anywhere re-delivers
    at most the unflushed records. Duplicates are recognised without holding the archive's ids:
    per topic partition, a watermark (the next offset not yet archived, written after each
    flush) skips records a crash or a rebalance re-delivers, and a bounded table of the most
    recent tracking keys (`tracking_ids` of them, loaded from the newest files) skips an event
    sent again at a new offset. So memory and start-up time stay flat as the archive grows.

    A watermark is trusted only where the group has a committed offset for its partition: a
    fresh broker (offsets start again from 0) has none unless the archive's replay put the
    archiver's offsets there, which it does (services.archiver.replay).
    """

    def __init__(self, source: RecordSource, store: ArchiveStore, settings: ArchiverSettings,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.source = source
        self.store = store
        self.settings = settings
        self.clock = clock
        self.store.clean_tmp()
        self.seen = RecentIds(settings.tracking_ids, store.recent_ids(settings.tracking_ids))
        self.stats = ArchiverStats(started_at=clock())
        #: Per (topic, partition): offsets below this are archived already (trusted watermark).
        self._floors: dict[tuple[str, int], int] = {}
        #: Per (topic, partition): the next offset after the buffered records.
        self._marks: dict[tuple[str, int], int] = {}
        # Each step's new rows become an Arrow table at once: the buffer then holds no Python
        # objects per row, so memory stays near the payload size and the GC has little to scan.
        self._buffer: list[pa.Table] = []
        self._buffered_rows = 0
        self._buffer_ids: set[str] = set()
        self._last_flush = clock()
        #: Partitions revoked since `_resolve_floors` began (a rebalance inside its queries).
        self._revoked_keys: set[tuple[str, int]] = set()
        #: Commit offsets after the final flush (false when the broker is known to be gone).
        self.commit_on_stop = True
        logger.info("archiver starts under %s with the %d most recent archived ids",
                    store.root, len(self.seen))

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

    def _floor(self, key: tuple[str, int]) -> int:
        """The trusted watermark of a partition (0 when there is none), read once per
        assignment."""
        mark = self.store.watermark(*key)
        floor = 0
        if mark:
            committed = self._committed(key)
            if committed is None:
                logger.info("%s[%d] has a watermark (%d) but no committed offset (a fresh "
                            "broker or group): re-read records are deduplicated by id only",
                            key[0], key[1], mark)
            else:
                floor = mark
        self._floors[key] = floor
        return floor

    def _committed(self, key: tuple[str, int]) -> int | None:
        committed = getattr(self.source, "committed", None)
        if committed is None:
            return None
        from aiokafka import TopicPartition

        return committed(TopicPartition(*key))

    def _resolve_floors(self, records: Sequence[ArchivableRecord]
                        ) -> Sequence[ArchivableRecord]:
        """Reads the floors of the batch's partitions not yet known, before any record is
        buffered, and returns the records of the partitions still owned.

        Reading a floor asks the broker for a committed offset, which runs the consumer's
        client, and with it any rebalance due: `revoked` then drops the buffered rows of the
        revoked partitions and the consumer forgets their pending offsets, so their records in
        this batch are dropped too (the owner re-reads them from the committed offset). Kept,
        they would be archived with a watermark above the dropped rows, which the re-read
        would then skip as archived: lost (the rebalance test saw ~100 events go so).
        """
        floors = self._floors
        unknown = {(r.topic, r.partition) for r in records}.difference(floors)
        if not unknown:
            return records
        self._revoked_keys = set()
        for key in unknown:
            if key not in floors:
                self._floor(key)
        gone, self._revoked_keys = self._revoked_keys, set()
        if not gone:
            return records
        for key in gone:  # read again when they come back, after this rebalance
            floors.pop(key, None)
        kept = [r for r in records if (r.topic, r.partition) not in gone]
        logger.info("a rebalance during a batch revoked %d partitions: %d of its %d records "
                    "are left to be read again", len(gone), len(records) - len(kept),
                    len(records))
        return kept

    def _take(self, records: Sequence[ArchivableRecord]) -> int:
        """Buffers the new rows of one polled batch as an Arrow table; returns len(records)."""
        if records:
            polled = len(records)
            records = self._resolve_floors(records)
            # No call below runs the consumer's client, so no rebalance lands in this loop.
            buffer_ids, seen, floors, marks = (self._buffer_ids, self.seen, self._floors,
                                               self._marks)
            fresh = []
            for record in records:
                key = (record.topic, record.partition)
                floor = floors[key]
                if record.offset < floor:
                    continue  # archived before a crash or a rebalance: re-delivered
                marks[key] = record.offset + 1
                row = to_row(record)
                if row is None or row.event_id in seen or row.event_id in buffer_ids:
                    continue
                buffer_ids.add(row.event_id)
                fresh.append(row)
            if fresh:
                self._buffer.append(to_table(fresh, archived_at_ms=0))  # stamped at flush
                self._buffered_rows += len(fresh)
            self.stats.polled += polled
            self.stats.duplicates += len(records) - len(fresh)
            return polled
        return 0

    def revoked(self, partitions: Iterable[Any]) -> None:
        """A rebalance took `partitions` away: their buffered rows are dropped (the new owner
        re-reads them from the committed offset) and their watermarks are read again if they
        come back."""
        lost = {(tp.topic, tp.partition) for tp in partitions}
        self._revoked_keys |= lost
        for key in lost:
            self._floors.pop(key, None)
            self._marks.pop(key, None)
        if not self._buffer:
            return
        table = pa.concat_tables(self._buffer)
        keys = pa.array([f"{t}\x00{p}" for t, p in lost], type=pa.string())
        joined = pc.binary_join_element_wise(table["topic"],
                                             pc.cast(table["partition"], pa.string()), "\x00")
        kept = table.filter(pc.invert(pc.is_in(joined, value_set=keys)))
        dropped = table.num_rows - kept.num_rows
        self._buffer = [kept] if kept.num_rows else []
        self._buffered_rows = kept.num_rows
        self._buffer_ids = set(kept["event_id"].to_pylist())
        if dropped:
            logger.info("dropped %d buffered rows of %d revoked partitions", dropped, len(lost))

    def flush(self, *, commit: bool = True) -> int:
        """Writes the buffer, then (unless `commit` is false: the broker is gone) commits the
        source's offsets; returns rows written."""
        rows = self._buffered_rows
        if rows:
            table = _stamped(pa.concat_tables(self._buffer), int(time.time() * 1000))
            self.stats.files += len(self.store.write(table))
            self.seen.extend(self._buffer_ids)
            counts = pc.value_counts(table["topic"])
            self.stats.archived.update(dict(zip(counts.field("values").to_pylist(),
                                                counts.field("counts").to_pylist(), strict=True)))
            self.stats.flushes += 1
        if self._marks:
            # After the files, before the commit: a crash between the two re-delivers records
            # that these watermarks then skip.
            self.store.set_watermarks(self._marks)
            for key, mark in self._marks.items():
                if key in self._floors:
                    self._floors[key] = max(self._floors[key], mark)
            self._marks = {}
        if commit:
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
        self.flush(commit=self.commit_on_stop)
        return self.stats


def _stamped(table: pa.Table, archived_at_ms: int) -> pa.Table:
    """`table` with every row's archived_at_ms set to the flush time."""
    index = table.schema.get_field_index("archived_at_ms")
    stamp = pa.repeat(pa.scalar(archived_at_ms, pa.int64()), table.num_rows)
    return table.set_column(index, table.schema.field(index), stamp)
