"""The pure part of the archiver: consumed records → new (not yet archived) rows → Arrow tables."""

from __future__ import annotations

import hashlib
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa

from schemas.envelope import Event
from schemas.topics import DLQ_SUFFIX

__all__ = [
    "ARCHIVE_SCHEMA",
    "DEAD_LETTER_ID_PREFIX",
    "ERROR_HEADER_KEYS",
    "VOLATILE_HEADER_KEYS",
    "ArchivableRecord",
    "ArchiveRow",
    "dead_letter_id",
    "is_dead_letter_topic",
    "new_rows",
    "to_row",
    "to_table",
]

#: Dead letters have no event id of their own; theirs is this prefix + a content hash, so a
#: redelivered or replayed dead letter is recognised like a redelivered event.
DEAD_LETTER_ID_PREFIX = "dlq-"
#: Header keys that may name a dead letter's error (the first present one fills `error`).
ERROR_HEADER_KEYS = ("error",)
#: Dead-letter headers that differ each time the same record fails (streams.dlq stamps the
#: time); left out of the dead-letter id so a redelivered failure is one archived row.
VOLATILE_HEADER_KEYS = frozenset({"failed_at"})
#: What identifies one failure when a dead letter names its source record: the source
#: topic/partition/offset and the consumer (group) that refused it, so each consumer's refusal
#: of one record is its own row (plus the content, so a different record at the same
#: coordinates of a later broker is another failure). The error text is left out: the same
#: record failing again in the same consumer after a restart is the same dead letter even if
#: the sentence changed.
SOURCE_COORDINATE_KEYS = ("source_topic", "source_partition", "source_offset", "consumer", "value_sha256")

_HEADER_TYPE = pa.struct([("key", pa.string()), ("value", pa.binary())])

#: One schema for every topic, dead-letter topics included. `payload` is the event JSON exactly
#: as it was on the wire (null for dead letters, whose bytes are in `raw`); envelope columns come
#: from the decoded event, so they are at the event type's current schema version.
ARCHIVE_SCHEMA = pa.schema([
    ("topic", pa.string()),
    ("partition", pa.int32()),
    ("offset", pa.int64()),
    ("timestamp_ms", pa.int64()),
    ("key", pa.binary()),
    ("event_id", pa.string()),
    ("type", pa.string()),
    ("schema_version", pa.int32()),
    ("occurred_at", pa.timestamp("us", tz="UTC")),
    ("source", pa.string()),
    ("correlation_id", pa.string()),
    ("causation_id", pa.string()),
    ("payload", pa.string()),
    ("raw", pa.binary()),
    ("error", pa.string()),
    ("headers", pa.list_(_HEADER_TYPE)),
    ("archived_at_ms", pa.int64()),
])


class ArchivableRecord(Protocol):
    """What the archiver needs of a consumed record (streams.consumer.Record fits)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: Sequence[tuple[str, bytes]] | None
    timestamp_ms: int
    event: Event | None


@dataclass(frozen=True, slots=True)
class ArchiveRow:
    """One archived record; `event_id` is the tracking key the archive is unique on."""

    event_id: str
    record: Any  # ArchivableRecord; Any keeps slots-dataclass typing simple


def is_dead_letter_topic(name: str) -> bool:
    return name.endswith(DLQ_SUFFIX)


def _headers(record: ArchivableRecord) -> list[tuple[str, bytes]]:
    return [(str(k), bytes(v) if v is not None else b"") for k, v in (record.headers or ())]


def dead_letter_id(record: ArchivableRecord) -> str:
    """A content id for a dead letter: its topic, key and bytes plus, when it names its source
    record, the source topic/partition/offset (so the same record dead-lettered again after a
    crash is one failure), else every stable header (not its own offset nor failure time).
    Redelivered or replayed into a fresh broker, it keeps its id."""
    digest = hashlib.sha256()
    for part in (record.topic.encode(), record.key or b"", record.value or b""):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    headers = _headers(record)
    names = {key for key, _ in headers}
    by_source = "source_topic" in names and "source_offset" in names
    for key, value in sorted(headers):
        if key in VOLATILE_HEADER_KEYS or (by_source and key not in SOURCE_COORDINATE_KEYS):
            continue
        for part in (key.encode(), value):
            digest.update(len(part).to_bytes(8, "big"))
            digest.update(part)
    return DEAD_LETTER_ID_PREFIX + digest.hexdigest()[:40]


def to_row(record: ArchivableRecord) -> ArchiveRow | None:
    """The row for a record, or None for a record that is neither an event nor a dead letter
    (the consumer has already dead-lettered those)."""
    if record.event is not None:
        return ArchiveRow(record.event.event_id, record)
    if is_dead_letter_topic(record.topic):
        return ArchiveRow(dead_letter_id(record), record)
    return None


def new_rows(records: Iterable[ArchivableRecord], seen: Container[str]) -> list[ArchiveRow]:
    """Rows for the records whose tracking key is not in `seen` (nor earlier in the batch).

    Pure apart from `seen`, which the caller owns and updates only once the rows are durable.
    """
    fresh: list[ArchiveRow] = []
    batch: set[str] = set()
    for record in records:
        row = to_row(record)
        if row is None or row.event_id in seen or row.event_id in batch:
            continue
        batch.add(row.event_id)
        fresh.append(row)
    return fresh


def _error_of(headers: list[tuple[str, bytes]]) -> str | None:
    by_key = dict(headers)
    for name in ERROR_HEADER_KEYS:
        if name in by_key:
            return by_key[name].decode("utf-8", "replace")
    return None


def to_table(rows: Sequence[ArchiveRow], archived_at_ms: int) -> pa.Table:
    """The Arrow table of `rows` in ARCHIVE_SCHEMA, built one column at a time from list
    comprehensions (cheaper per row than appending to every column in one loop); headers are
    flat key/value arrays plus list offsets, and payload bytes are checked as UTF-8 by Arrow."""
    records = [row.record for row in rows]
    events = [record.event for record in records]
    values = [record.value for record in records]
    field = ARCHIVE_SCHEMA.field

    def column(name: str, data: list[Any]) -> pa.Array:
        return pa.array(data, type=field(name).type)

    def envelope(name: str) -> pa.Array:
        return column(name, [getattr(e, name) if e is not None else None for e in events])

    header_lists = [record.headers or () for record in records]
    header_offsets = [0]
    running = 0
    for headers in header_lists:
        running += len(headers)
        header_offsets.append(running)
    flat = [pair for headers in header_lists for pair in headers]
    pairs = pa.StructArray.from_arrays(
        [pa.array([k for k, _ in flat], type=pa.string()),
         pa.array([v for _, v in flat], type=pa.binary())], fields=list(_HEADER_TYPE))

    is_event = [e is not None for e in events]
    arrays = {
        "topic": column("topic", [r.topic for r in records]),
        "partition": column("partition", [r.partition for r in records]),
        "offset": column("offset", [r.offset for r in records]),
        "timestamp_ms": column("timestamp_ms", [r.timestamp_ms for r in records]),
        "key": column("key", [r.key for r in records]),
        "event_id": column("event_id", [row.event_id for row in rows]),
        "type": envelope("type"),
        "schema_version": envelope("schema_version"),
        "occurred_at": envelope("occurred_at"),
        "source": envelope("source"),
        "correlation_id": envelope("correlation_id"),
        "causation_id": envelope("causation_id"),
        # bytes → string in C: UTF-8 checked, no Python str per row
        "payload": pa.array([v if ok else None for v, ok in zip(values, is_event, strict=True)],
                            type=pa.binary()).cast(pa.string()),
        "raw": column("raw", [None if ok else v for v, ok in zip(values, is_event, strict=True)]),
        "error": column("error", [None if e is not None else _error_of(_headers(r))
                                  for r, e in zip(records, events, strict=True)]),
        "headers": pa.ListArray.from_arrays(pa.array(header_offsets, type=pa.int32()), pairs,
                                            type=field("headers").type),
        "archived_at_ms": pa.repeat(pa.scalar(archived_at_ms, pa.int64()), len(rows)),
    }
    return pa.table([arrays[name] for name in ARCHIVE_SCHEMA.names], schema=ARCHIVE_SCHEMA)
