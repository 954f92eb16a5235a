"""Where the archiver reads from: typed events of the loop's topics plus raw dead letters."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from kafka import KafkaConsumer, TopicPartition
from kafka.errors import CommitFailedError
from kafka.structs import OffsetAndMetadata

from schemas.envelope import Event
from schemas.registry import SchemaError
from schemas.topics import Topic
from streams.codec import decode
from streams.consumer import CONSUMER_DEFAULTS
from streams.dlq import DeadLetterRouter
from streams.settings import DEFAULT_MAX_MESSAGE_BYTES

__all__ = ["MAX_RECORDS", "ArchiverRecord", "ArchiverSource"]

logger = logging.getLogger(__name__)

#: Records per poll: large batches amortise the per-poll cost; 5k × 1 KiB is ~5 MiB in memory.
MAX_RECORDS = 5_000


@dataclass(frozen=True, slots=True)
class ArchiverRecord:
    """A consumed record as the archiver sees it: `event` is None for a dead letter."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...]
    timestamp_ms: int
    event: Event | None = None


class ArchiverSource:
    """One consumer group member over the event topics and their dead-letter topics.

    Event records are decoded (a bad one is dead-lettered, as every consumer does; the
    archive then gets it from the dead-letter topic); dead letters pass through as bytes.
    One member rather than two keeps one group join (slow on Tansu) and one poll per step.
    """

    def __init__(self, bootstrap: str, topics: Sequence[Topic], group_id: str, *,
                 include_dead_letters: bool = True, max_records: int = MAX_RECORDS,
                 max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                 client_id: str = "flywheel-archiver") -> None:
        if not topics:
            raise ValueError("the archiver needs at least one topic")
        self.topics = {t.name: t for t in topics}
        names = list(self.topics)
        if include_dead_letters:
            names += [t.dlq for t in topics]
        self.max_message_bytes = max_message_bytes
        self._router = DeadLetterRouter(bootstrap, client_id=f"{client_id}-dlq")
        self._consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group_id,
                                       client_id=client_id, auto_offset_reset="earliest",
                                       max_poll_records=max_records, **CONSUMER_DEFAULTS)
        self._consumer.subscribe(topics=names)
        self._pending: dict[TopicPartition, int] = {}
        self.dead_lettered = 0

    def poll_batch(self, timeout_ms: int) -> list[ArchiverRecord]:
        out: list[ArchiverRecord] = []
        for tp, messages in self._consumer.poll(timeout_ms=timeout_ms).items():
            topic = self.topics.get(tp.topic)  # None: a dead-letter topic
            for m in messages:
                event = None
                if topic is not None:
                    try:
                        event = decode(m.value, topic, self.max_message_bytes)
                    except SchemaError as error:
                        self._router.route(m.topic, m.partition, m.offset, m.key, m.value, error)
                        self.dead_lettered += 1
                        self._pending[tp] = m.offset + 1
                        continue
                out.append(ArchiverRecord(m.topic, m.partition, m.offset, m.key, m.value,
                                          tuple(m.headers or ()), m.timestamp, event))
            if messages:
                self._pending[tp] = messages[-1].offset + 1
        return out

    def commit(self) -> None:
        """Commits everything polled so far, once the dead letters are acknowledged."""
        if not self._pending:
            return
        self._router.flush()
        assigned = self._consumer.assignment()
        offsets = {tp: OffsetAndMetadata(o, "", -1) for tp, o in self._pending.items()
                   if tp in assigned}
        self._pending.clear()
        if offsets:
            try:
                self._consumer.commit(offsets)
            except CommitFailedError:
                logger.warning("commit failed after a rebalance; %d partitions will be re-read "
                               "(and deduplicated)", len(offsets))

    def close(self) -> None:
        """Leaves the group without committing (unflushed records are redelivered)."""
        try:
            self._router.close()
        finally:
            self._consumer.close(autocommit=False)
