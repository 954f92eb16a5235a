"""A typed batch consumer: valid events out, everything else to the dead-letter topic."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal, Self

from kafka import KafkaConsumer, TopicPartition
from kafka.errors import CommitFailedError
from kafka.structs import OffsetAndMetadata

from schemas.envelope import Event
from schemas.registry import SchemaError
from schemas.topics import Topic
from streams.codec import decode
from streams.dlq import DeadLetterRouter
from streams.settings import DEFAULT_MAX_MESSAGE_BYTES

__all__ = [
    "CONSUMER_DEFAULTS",
    "ErrorAction",
    "ErrorHandler",
    "RawRecord",
    "Record",
    "TypedBatchConsumer",
    "dead_letter_all",
    "raise_all",
]

logger = logging.getLogger(__name__)

#: What the error handler decides for a message that failed to decode or validate.
ErrorAction = Literal["dead-letter", "raise"]

#: kafka-python settings for every consumer of the loop.
CONSUMER_DEFAULTS: dict[str, Any] = {
    # We commit by hand after side effects: at-least-once.
    "enable_auto_commit": False,
    # Tansu's first JoinGroup waits session_timeout/2 (DESIGN.md): 6 s keeps that at 3 s while
    # still tolerating a GC pause; the heartbeat is a third of it, as Kafka recommends.
    "session_timeout_ms": 6000,
    "heartbeat_interval_ms": 2000,
    # Explicit topic creation only (Tansu would auto-create with 4 partitions).
    "allow_auto_create_topics": False,
}
#: Records per poll: big enough to amortise a sink transaction, small enough to keep memory low.
DEFAULT_MAX_RECORDS = 500
#: Wait per poll when nothing is there; short so loops notice shutdown quickly.
DEFAULT_POLL_MS = 1000


@dataclass(frozen=True)
class RawRecord:
    """A message as it came off the wire, before decoding."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...]
    timestamp_ms: int


@dataclass(frozen=True)
class Record(RawRecord):
    """A message and the valid event decoded from it."""

    event: Event


ErrorHandler = Callable[[RawRecord, SchemaError], ErrorAction]


def dead_letter_all(record: RawRecord, error: SchemaError) -> ErrorAction:
    """The default: every bad message goes to the dead-letter topic and consumption goes on."""
    return "dead-letter"


def raise_all(record: RawRecord, error: SchemaError) -> ErrorAction:
    """Stops at the first bad message (tools that must not skip anything)."""
    return "raise"


class TypedBatchConsumer:
    """Polls batches of valid events from registered topics as one consumer group member.

    Bad messages go to `<topic>.dlq` (or raise, as `on_error` decides). `commit()` commits
    everything returned so far: call it after the batch's side effects are durable.
    """

    def __init__(self, bootstrap: str, topics: Sequence[Topic], group_id: str | None, *,
                 on_error: ErrorHandler = dead_letter_all,
                 auto_offset_reset: Literal["earliest", "latest"] = "earliest",
                 max_records: int = DEFAULT_MAX_RECORDS,
                 max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                 dead_letters: DeadLetterRouter | None = None,
                 client_id: str = "flywheel",
                 **kafka_kwargs: Any) -> None:
        if not topics:
            raise ValueError("TypedBatchConsumer needs at least one topic")
        self.topics = {t.name: t for t in topics}
        self.on_error = on_error
        self.max_records = max_records
        self.max_message_bytes = max_message_bytes
        self._owns_router = dead_letters is None
        self._router = dead_letters or DeadLetterRouter(bootstrap, client_id=f"{client_id}-dlq")
        config = {**CONSUMER_DEFAULTS, "auto_offset_reset": auto_offset_reset,
                  "max_poll_records": max_records, **kafka_kwargs}
        self._consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group_id,
                                       client_id=client_id, **config)
        self._consumer.subscribe(topics=list(self.topics))
        self._pending: dict[TopicPartition, int] = {}
        self.dead_lettered = 0

    @property
    def kafka(self) -> KafkaConsumer:
        """The underlying kafka-python consumer (for seeks and assignment queries)."""
        return self._consumer

    def poll_batch(self, timeout_ms: int = DEFAULT_POLL_MS) -> list[Record]:
        """One poll: the valid records, in partition order; bad ones are dead-lettered."""
        polled = self._consumer.poll(timeout_ms=timeout_ms, max_records=self.max_records)
        out: list[Record] = []
        for tp, messages in polled.items():
            topic = self.topics[tp.topic]
            for m in messages:
                headers = tuple(m.headers or ())
                try:
                    # The headers let a current-version event skip the dict round trip.
                    event = decode(m.value, topic, self.max_message_bytes, headers)
                except SchemaError as error:
                    self._handle(RawRecord(m.topic, m.partition, m.offset, m.key, m.value,
                                           headers, m.timestamp), error)
                else:
                    out.append(Record(m.topic, m.partition, m.offset, m.key, m.value, headers,
                                      m.timestamp, event))
                self._pending[tp] = m.offset + 1
        return out

    def _handle(self, raw: RawRecord, error: SchemaError) -> None:
        action = self.on_error(raw, error)
        if action == "dead-letter":
            self._router.route(raw.topic, raw.partition, raw.offset, raw.key, raw.value, error)
            self.dead_lettered += 1
        elif action == "raise":
            raise error
        else:
            raise ValueError(f"the error handler returned {action!r}; it must return "
                             f"'dead-letter' or 'raise'")

    def commit(self) -> None:
        """Commits everything returned so far, after the dead letters are acknowledged."""
        if not self._pending:
            return
        self._router.flush()
        assigned = self._consumer.assignment()
        offsets = {tp: OffsetAndMetadata(offset, "", -1)
                   for tp, offset in self._pending.items() if tp in assigned}
        self._pending.clear()
        if not offsets:
            return
        try:
            self._consumer.commit(offsets)
        except CommitFailedError:
            # A rebalance moved the partitions: the new owner re-reads them (at-least-once).
            logger.warning("commit failed after a rebalance; %d partitions will be re-read",
                           len(offsets))

    def iter_batches(self, timeout_ms: int = DEFAULT_POLL_MS, *, commit: bool = True,
                     max_batches: int | None = None, stop_after_idle_polls: int | None = None,
                     ) -> Iterator[list[Record]]:
        """Yields non-empty batches; with `commit`, each batch is committed when the loop body
        asks for the next one (so after its side effects). Stops after `max_batches`
        batches or `stop_after_idle_polls` empty polls in a row, if given."""
        batches = idle = 0
        while max_batches is None or batches < max_batches:
            batch = self.poll_batch(timeout_ms)
            if not batch:
                if commit:
                    self.commit()  # dead letters alone still move the offsets on
                idle += 1
                if stop_after_idle_polls is not None and idle >= stop_after_idle_polls:
                    return
                continue
            idle = 0
            batches += 1
            yield batch
            if commit:
                self.commit()

    def close(self) -> None:
        """Leaves the group (uncommitted records are redelivered) and closes the clients."""
        try:
            self._router.flush()
        finally:
            self._consumer.close(autocommit=False)
            if self._owns_router:
                self._router.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
