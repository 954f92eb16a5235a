"""The pure part of the archiver: consumed records → new (not yet archived) rows → Arrow tables."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
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
    """A content id for a dead letter: its topic, key, bytes and stable headers (error, source
    topic/partition/offset; not its own offset nor failure time), so the same failure
    dead-lettered again, redelivered or replayed into a fresh broker gets the same id."""
    digest = hashlib.sha256()
    for part in (record.topic.encode(), record.key or b"", record.value or b""):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    for key, value in sorted(_headers(record)):
        if key in VOLATILE_HEADER_KEYS:
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


def new_rows(records: Iterable[ArchivableRecord], seen: set[str]) -> list[ArchiveRow]:
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
    """The Arrow table of `rows` in ARCHIVE_SCHEMA, built column by column; headers are built as
    flat key/value arrays plus list offsets, and payload bytes are checked as UTF-8 by Arrow."""
    columns: dict[str, list[Any]] = {name: [] for name in ARCHIVE_SCHEMA.names
                                     if name not in ("headers", "archived_at_ms")}
    header_offsets, header_keys, header_values = [0], [], []
    for row in rows:
        record = row.record
        headers = record.headers or ()
        event = record.event
        columns["topic"].append(record.topic)
        columns["partition"].append(record.partition)
        columns["offset"].append(record.offset)
        columns["timestamp_ms"].append(record.timestamp_ms)
        columns["key"].append(record.key)
        columns["event_id"].append(row.event_id)
        for key, value in headers:
            header_keys.append(key)
            header_values.append(value)
        header_offsets.append(len(header_keys))
        if event is not None:
            columns["type"].append(event.type)
            columns["schema_version"].append(event.schema_version)
            columns["occurred_at"].append(event.occurred_at)
            columns["source"].append(event.source)
            columns["correlation_id"].append(event.correlation_id)
            columns["causation_id"].append(event.causation_id)
            columns["payload"].append(record.value)
            columns["raw"].append(None)
            columns["error"].append(None)
        else:
            for name in ("type", "schema_version", "occurred_at", "source", "correlation_id",
                         "causation_id", "payload"):
                columns[name].append(None)
            columns["raw"].append(record.value)
            columns["error"].append(_error_of(_headers(record)))
    arrays: dict[str, pa.Array] = {}
    for name, values in columns.items():
        if name == "payload":  # bytes → string in C: UTF-8 checked, no Python str per row
            arrays[name] = pa.array(values, type=pa.binary()).cast(pa.string())
        else:
            arrays[name] = pa.array(values, type=ARCHIVE_SCHEMA.field(name).type)
    pairs = pa.StructArray.from_arrays(
        [pa.array(header_keys, type=pa.string()), pa.array(header_values, type=pa.binary())],
        fields=list(_HEADER_TYPE))
    arrays["headers"] = pa.ListArray.from_arrays(pa.array(header_offsets, type=pa.int32()),
                                                 pairs, type=ARCHIVE_SCHEMA.field("headers").type)
    arrays["archived_at_ms"] = pa.array([archived_at_ms] * len(rows), type=pa.int64())
    return pa.table([arrays[name] for name in ARCHIVE_SCHEMA.names], schema=ARCHIVE_SCHEMA)
