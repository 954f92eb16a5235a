"""Dead-letter routing: raw bytes that failed to decode go to `<topic>.dlq` with error headers."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Self

from kafka import KafkaConsumer, TopicPartition
from kafka.producer.future import FutureRecordMetadata

from schemas.topics import DLQ_SUFFIX, dlq_name
from streams.codec import header_value
from streams.producer import TypedProducer

__all__ = [
    "DLQ_HEADERS",
    "DeadLetter",
    "DeadLetterRouter",
    "error_sentence",
    "read_dead_letters",
    "safe_preview",
]

logger = logging.getLogger(__name__)

#: Headers every dead letter carries, in this order.
DLQ_HEADERS = ("error", "error_type", "source_topic", "source_partition", "source_offset",
               "failed_at")
#: Longest error header kept: one sentence, not a dump of the payload.
MAX_ERROR_CHARS = 500
#: read_dead_letters stops after this long without a new record; Tansu's end offsets are
#: unreliable (DESIGN.md), so "nothing more arrived for a while" is how we know we are done.
READ_IDLE_MS = 1500
#: One poll's wait; short so the idle timer above is checked often.
READ_POLL_MS = 250


def error_sentence(error: BaseException) -> str:
    """The error as one line of at most MAX_ERROR_CHARS characters."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


def safe_preview(value: bytes | None, limit: int = 200) -> str:
    """Printable text for a terminal: escapes for control and non-UTF-8 bytes, then truncated
    with a marker saying how much was left out."""
    if value is None:
        return "<no value>"
    text = value.decode("utf-8", "backslashreplace")
    out: list[str] = []
    for char in text:
        if char == "\\" or char.isprintable():
            out.append(char)
        elif char in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[char])
        else:
            code = ord(char)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    preview = "".join(out)
    if len(preview) > limit:
        return preview[:limit] + f"… [{len(value)} bytes in all]"
    return preview


@dataclass(frozen=True)
class DeadLetter:
    """One message read back from a dead-letter topic."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    error: str
    error_type: str
    source_topic: str
    source_partition: int | None
    source_offset: int | None
    failed_at: str
    timestamp_ms: int


class DeadLetterRouter:
    """Produces failed messages, byte for byte, to their topic's dead-letter topic."""

    def __init__(self, producer: TypedProducer | str, client_id: str = "flywheel-dlq") -> None:
        if isinstance(producer, TypedProducer):
            self._producer, self._owned = producer, False
        else:
            self._producer, self._owned = TypedProducer(producer, client_id=client_id), True
        self.routed = 0

    def route(self, source_topic: str, partition: int, offset: int, key: bytes | None,
              value: bytes | None, error: BaseException) -> FutureRecordMetadata:
        """Sends the raw bytes to `<source_topic>.dlq` with headers naming the error and source."""
        headers = [
            ("error", error_sentence(error).encode()),
            ("error_type", type(error).__name__.encode()),
            ("source_topic", source_topic.encode()),
            ("source_partition", str(partition).encode()),
            ("source_offset", str(offset).encode()),
            ("failed_at", datetime.now(UTC).isoformat().encode()),
        ]
        self.routed += 1
        logger.warning("dead-lettered %s[%s]@%s: %s", source_topic, partition, offset,
                       error_sentence(error))
        return self._producer.send_raw(dlq_name(source_topic), value, key=key, headers=headers)

    def flush(self) -> None:
        """Blocks until every routed message is acknowledged (call before committing offsets)."""
        self._producer.flush()

    def close(self) -> None:
        if self._owned:
            self._producer.close()
        else:
            self._producer.flush()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _int_or_none(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def read_dead_letters(bootstrap: str, topic_name: str, limit: int = 20, *,
                      idle_ms: int = READ_IDLE_MS) -> list[DeadLetter]:
    """The oldest `limit` dead letters of `topic_name` (a topic or its `.dlq`), read without a
    consumer group so reading changes nothing."""
    name = topic_name if topic_name.endswith(DLQ_SUFFIX) else dlq_name(topic_name)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             client_id="flywheel-dlq-reader", auto_offset_reset="earliest")
    try:
        partitions = consumer.partitions_for_topic(name) or set()
        if not partitions:
            return []
        assigned = [TopicPartition(name, p) for p in sorted(partitions)]
        consumer.assign(assigned)
        consumer.seek_to_beginning(*assigned)
        letters: list[DeadLetter] = []
        last_seen = time.monotonic()
        while len(letters) < limit and (time.monotonic() - last_seen) * 1000 < idle_ms:
            batch = consumer.poll(timeout_ms=READ_POLL_MS, max_records=limit - len(letters))
            for records in batch.values():
                last_seen = time.monotonic()
                for r in records:
                    headers = r.headers or []
                    letters.append(DeadLetter(
                        topic=r.topic, partition=r.partition, offset=r.offset, key=r.key,
                        value=r.value, error=header_value(headers, "error") or "",
                        error_type=header_value(headers, "error_type") or "",
                        source_topic=header_value(headers, "source_topic") or "",
                        source_partition=_int_or_none(header_value(headers, "source_partition")),
                        source_offset=_int_or_none(header_value(headers, "source_offset")),
                        failed_at=header_value(headers, "failed_at") or "",
                        timestamp_ms=r.timestamp,
                    ))
        letters.sort(key=lambda d: (d.partition, d.offset))
        return letters[:limit]
    finally:
        consumer.close()
