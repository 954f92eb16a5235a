"""Where the archiver reads from: typed events of the loop's topics plus raw dead letters."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import CommitFailedError, IllegalStateError

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
#: Group timing as every consumer of the loop has it (Tansu's first JoinGroup waits half the
#: session timeout, DESIGN.md), taken from the kafka-python defaults so the two never drift.
SESSION_TIMEOUT_MS: int = CONSUMER_DEFAULTS["session_timeout_ms"]
HEARTBEAT_INTERVAL_MS: int = CONSUMER_DEFAULTS["heartbeat_interval_ms"]
#: A flush writes and fsyncs up to flush_max_events rows between polls; five minutes (Kafka's
#: default) keeps a slow disk from costing the archiver its group membership. (Heartbeats stop
#: during a flush too: one longer than the session timeout makes the group rebalance, the
#: commit then fails, and the records are re-read and deduplicated; nothing is lost.)
MAX_POLL_INTERVAL_MS = 300_000
#: Joins, commits and the final leave wait at most this long before the call gives up.
CALL_TIMEOUT_S = 60.0
#: A poll may overrun its timeout by this much (aiokafka waits out a rebalance inside getmany,
#: ~3 s on Tansu) before it returns empty, so the archiver still checks its stop flag.
POLL_GRACE_S = 1.0

T = TypeVar("T")


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


class _Runner:
    """A private asyncio event loop driven from the calling thread: each call runs the loop
    until its coroutine is done. aiokafka's fetcher and heartbeat run only inside those calls;
    a loop in its own thread would keep them going between calls, but on two cores its fight
    for the GIL with decoding cost more than the prefetch gave (measured: ~20% fewer events/s).
    """

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = CALL_TIMEOUT_S) -> T:
        return self.loop.run_until_complete(asyncio.wait_for(coro, timeout))

    def close(self) -> None:
        try:
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        finally:
            self.loop.close()


class ArchiverSource:
    """One aiokafka consumer group member over the event topics and their dead-letter topics.

    Event records are decoded (a bad one is dead-lettered, as every consumer does; the
    archive then gets it from the dead-letter topic); dead letters pass through as bytes.
    One member rather than two keeps one group join (slow on Tansu) and one poll per step.
    Offsets are committed only by `commit`, which the archiver calls after its files are in
    place: at least once, and exactly once per event id with the archive's dedupe.
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
        self.max_records = max_records
        self.max_message_bytes = max_message_bytes
        self._pending: dict[TopicPartition, int] = {}
        self.dead_lettered = 0
        self._router = DeadLetterRouter(bootstrap, client_id=f"{client_id}-dlq")
        self._loop = _Runner()
        try:
            self._consumer = self._loop.call(self._start(bootstrap, names, group_id, client_id))
        except BaseException:
            self._loop.close()
            self._router.close()
            raise

    async def _start(self, bootstrap: str, names: list[str], group_id: str,
                     client_id: str) -> AIOKafkaConsumer:
        # Topics given here, not via subscribe() after start(): start() then returns once the
        # group is joined and partitions are assigned, so the first poll finds data ready.
        consumer = AIOKafkaConsumer(
            *names, bootstrap_servers=bootstrap, group_id=group_id, client_id=client_id,
            auto_offset_reset="earliest", enable_auto_commit=False,
            session_timeout_ms=SESSION_TIMEOUT_MS, heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
            max_poll_interval_ms=MAX_POLL_INTERVAL_MS, max_poll_records=self.max_records)
        try:
            await consumer.start()
        except BaseException:
            await consumer.stop()
            raise
        return consumer

    def poll_batch(self, timeout_ms: int) -> list[ArchiverRecord]:
        try:
            batches = self._loop.call(self._consumer.getmany(timeout_ms=timeout_ms,
                                                             max_records=self.max_records),
                                      timeout_ms / 1000 + POLL_GRACE_S)
        except TimeoutError:  # a rebalance in progress: the caller checks its stop flag
            return []
        out: list[ArchiverRecord] = []
        append = out.append
        for tp, messages in batches.items():
            if not messages:
                continue
            topic = self.topics.get(tp.topic)  # None: a dead-letter topic
            for m in messages:
                event = None
                if topic is not None:
                    try:
                        event = decode(m.value, topic, self.max_message_bytes, m.headers)
                    except SchemaError as error:
                        self._router.route(m.topic, m.partition, m.offset, m.key, m.value, error)
                        self.dead_lettered += 1
                        continue
                append(ArchiverRecord(m.topic, m.partition, m.offset, m.key, m.value,
                                      tuple(m.headers), m.timestamp, event))
            self._pending[tp] = messages[-1].offset + 1
        return out

    def commit(self) -> None:
        """Commits everything polled so far, once the dead letters are acknowledged."""
        if not self._pending:
            return
        self._router.flush()
        pending, self._pending = self._pending, {}
        self._loop.call(self._commit(pending))

    async def _commit(self, pending: dict[TopicPartition, int]) -> None:
        assigned = self._consumer.assignment()
        offsets = {tp: offset for tp, offset in pending.items() if tp in assigned}
        if not offsets:
            return
        try:
            await self._consumer.commit(offsets)
        except (CommitFailedError, IllegalStateError):
            logger.warning("commit failed after a rebalance; %d partitions will be re-read "
                           "(and deduplicated)", len(offsets))

    def close(self) -> None:
        """Leaves the group without committing (unflushed records are redelivered)."""
        try:
            self._router.close()
        finally:
            try:
                self._loop.call(self._consumer.stop())
            finally:
                self._loop.close()
