"""The Parquet archive on disk: atomic part files under topic=<name>/date=<yyyy-mm-dd>/."""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from services.archiver.rows import ARCHIVE_SCHEMA

__all__ = ["DATE_PREFIX", "TOPIC_PREFIX", "ArchiveMissing", "ArchiveStore", "TopicStats"]

logger = logging.getLogger(__name__)

#: Hive-style folder prefixes, so DuckDB, pyarrow and Spark all read the layout natively.
TOPIC_PREFIX = "topic="
DATE_PREFIX = "date="
#: Part files end in this; anything else in the tree (e.g. a crashed write's .tmp) is ignored.
PART_SUFFIX = ".parquet"
#: A write in progress; renamed to the final name only once complete and synced.
TMP_SUFFIX = ".tmp"
#: A temporary file younger than this may be another member's write in progress (members of
#: one group can share an archive): only older ones are a crash's leftovers to remove.
STALE_TMP_S = 3600.0
#: zstd compresses JSON payloads ~4-6x at a write speed that keeps up with the bus.
COMPRESSION = "zstd"
#: Per-partition offset watermarks live here, one small file per topic partition (so several
#: archiver members, each owning some partitions, never write the same file).
TRACKING_FOLDER = "_tracking"


class ArchiveMissing(FileNotFoundError):
    """There is no archive at the given folder (one sentence for people)."""


@dataclass(frozen=True)
class TopicStats:
    """What `flywheel archive stats` shows for one topic."""

    topic: str
    files: int
    rows: int
    bytes: int


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on folders; the rename is still atomic
    finally:
        os.close(fd)


class ArchiveStore:
    """Reads and writes the archive under `root`; every write is a new part file made atomic by
    writing a temporary file, syncing it and renaming it into place."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    # ---- writing -------------------------------------------------------------------------

    def clean_tmp(self, older_than_s: float = STALE_TMP_S) -> int:
        """Removes leftovers of writes a crash interrupted; returns how many.

        Only files older than `older_than_s` go: a younger one may be a write in progress by
        another member sharing the archive, which would fail at its rename if removed (a
        leftover is invisible to readers meanwhile)."""
        removed = 0
        if self.root.is_dir():
            cutoff = time.time() - older_than_s
            for path in self.root.rglob(f"*{TMP_SUFFIX}"):
                try:
                    if path.stat().st_mtime > cutoff:
                        continue
                except FileNotFoundError:  # renamed into place meanwhile
                    continue
                path.unlink(missing_ok=True)
                removed += 1
        if removed:
            logger.info("removed %d unfinished archive writes under %s", removed, self.root)
        return removed

    def write(self, table: pa.Table) -> list[Path]:
        """Writes `table` (ARCHIVE_SCHEMA) as one part file per topic and UTC date; returns them.

        Returns only once every file is durable under its final name.
        """
        if table.num_rows == 0:
            return []
        dates = _dates(table)
        stamp = f"{int(time.time() * 1000)}-{uuid.uuid4().hex[:8]}"
        written: list[Path] = []
        topics = pc.unique(table["topic"]).to_pylist()
        for topic in topics:
            in_topic = pc.equal(table["topic"], topic)
            days = pc.unique(dates.filter(in_topic)).to_pylist()
            for day in days:
                if len(topics) == len(days) == 1:
                    part = table  # the common case: no need to copy every payload in a filter
                else:
                    part = table.filter(pc.and_(in_topic, pc.equal(dates, day)))
                folder = self.root / f"{TOPIC_PREFIX}{topic}" / f"{DATE_PREFIX}{day.isoformat()}"
                written.append(self._write_part(folder, f"part-{stamp}{PART_SUFFIX}", part))
        return written

    def _write_part(self, folder: Path, name: str, table: pa.Table) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        final = folder / name
        tmp = folder / f".{name}{TMP_SUFFIX}"
        pq.write_table(table, tmp, compression=COMPRESSION)
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, final)
        _fsync_dir(folder)
        return final

    # ---- reading -------------------------------------------------------------------------

    def exists(self) -> bool:
        return any(self.files())

    def require(self) -> None:
        """Raises ArchiveMissing with one sentence when there is no archive here."""
        if not self.exists():
            raise ArchiveMissing(f"no event archive at {self.root}; run `flywheel run` to build "
                                 f"one, or pass --archive DIR pointing at an existing archive")

    def topics(self) -> list[str]:
        """Names of the archived topics, dead-letter topics included, sorted."""
        if not self.root.is_dir():
            return []
        return sorted(p.name[len(TOPIC_PREFIX):] for p in self.root.iterdir()
                      if p.is_dir() and p.name.startswith(TOPIC_PREFIX)
                      and any(p.rglob(f"*{PART_SUFFIX}")))

    def topic_dir(self, topic: str) -> Path:
        return self.root / f"{TOPIC_PREFIX}{topic}"

    def files(self, topics: Iterable[str] | None = None) -> list[Path]:
        """Part files (sorted), of the given topics or of all."""
        if not self.root.is_dir():
            return []
        folders = ([self.topic_dir(t) for t in topics] if topics is not None
                   else [p for p in self.root.iterdir() if p.name.startswith(TOPIC_PREFIX)])
        return sorted(f for folder in folders if folder.is_dir()
                      for f in folder.rglob(f"*{PART_SUFFIX}") if not f.name.startswith("."))

    def read(self, topics: Iterable[str] | None = None,
             columns: list[str] | None = None) -> pa.Table:
        """The archived rows (of `topics`, or all) as one table in ARCHIVE_SCHEMA order."""
        files = self.files(topics)
        schema = ARCHIVE_SCHEMA if columns is None else pa.schema(
            [ARCHIVE_SCHEMA.field(c) for c in columns])
        if not files:
            return schema.empty_table()
        tables = [pq.read_table(f, columns=columns, schema=schema) for f in files]
        return pa.concat_tables(tables)

    # ---- tracking: per-partition watermarks and the recent ids ---------------------------

    def _watermark_path(self, topic: str, partition: int) -> Path:
        return self.root / TRACKING_FOLDER / f"{TOPIC_PREFIX}{topic}" / f"{partition}.offset"

    def watermark(self, topic: str, partition: int) -> int | None:
        """The next offset of `topic`/`partition` not yet archived (as the last write left it),
        or None when never written."""
        try:
            return int(self._watermark_path(topic, partition).read_text().split()[0])
        except (FileNotFoundError, IndexError, ValueError):
            return None

    def set_watermarks(self, marks: dict[tuple[str, int], int]) -> None:
        """Records the next unarchived offset per (topic, partition), atomically per file.

        Called after the part files are durable: a crash between the two leaves an older
        watermark, which only means re-reading records the recent-id table then skips."""
        for (topic, partition), offset in marks.items():
            path = self._watermark_path(topic, partition)
            path.parent.mkdir(parents=True, exist_ok=True)
            # A name of its own: two members writing one partition's mark (an overlap in a
            # rebalance) must not rename each other's file away.
            tmp = path.with_name(f".{path.name}-{uuid.uuid4().hex[:8]}{TMP_SUFFIX}")
            tmp.write_text(f"{offset}\n")
            os.replace(tmp, path)

    def reset_watermarks(self, marks: dict[tuple[str, int], int]) -> None:
        """Forgets every watermark and records `marks` (a replay into a fresh broker, whose
        offsets start again from 0, does this)."""
        folder = self.root / TRACKING_FOLDER
        if folder.is_dir():
            for path in folder.rglob("*.offset"):
                path.unlink(missing_ok=True)
        self.set_watermarks(marks)

    def recent_ids(self, limit: int) -> list[str]:
        """Up to `limit` tracking keys from the newest part files, oldest first: what the
        archiver's bounded duplicate table starts with (its cost does not grow with the
        archive, only with `limit`)."""
        files = sorted(self.files(), key=lambda p: p.name)  # part-<ms>-<rand>: time order
        chunks: list[list[str]] = []
        count = 0
        for path in reversed(files):
            ids = pq.read_table(path, columns=["event_id"])["event_id"].to_pylist()
            chunks.append(ids)
            count += len(ids)
            if count >= limit:
                break
        ids = [i for chunk in reversed(chunks) for i in chunk]
        return ids[-limit:] if limit else []

    def event_ids(self) -> set[str]:
        """Every tracking key (event id or dead-letter id) in the archive."""
        ids: set[str] = set()
        for path in self.files():
            ids.update(pq.read_table(path, columns=["event_id"])["event_id"].to_pylist())
        return ids

    def read_for_replay(self, topic: str) -> pa.Table:
        """One topic's rows in (partition, offset, archived_at) order: the order to re-publish."""
        table = self.read([topic], columns=["topic", "partition", "offset", "timestamp_ms",
                                            "key", "event_id", "payload", "raw", "headers",
                                            "archived_at_ms"])
        return table.sort_by([("partition", "ascending"), ("offset", "ascending"),
                              ("archived_at_ms", "ascending")])

    def stats(self) -> list[TopicStats]:
        """Files, rows and bytes per archived topic (from Parquet footers; cheap)."""
        result = []
        for topic in self.topics():
            files = self.files([topic])
            rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
            size = sum(f.stat().st_size for f in files)
            result.append(TopicStats(topic, len(files), rows, size))
        return result


def _dates(table: pa.Table) -> pa.ChunkedArray:
    """The UTC date of each row: occurred_at for events, the broker timestamp for dead letters."""
    occurred = pc.cast(table["occurred_at"], pa.date32())
    broker_time = pc.cast(pc.cast(table["timestamp_ms"], pa.timestamp("ms", tz="UTC")),
                          pa.date32())
    return pc.coalesce(occurred, broker_time)
