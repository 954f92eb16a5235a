"""The one typed batch consumer of the loop (aiokafka): valid events out, every failure to the
dead-letter topic, explicit commits after side effects.

No record can stop a consumer: any exception while decoding or validating a record (recursion,
memory, encoding, a bug) dead-letters it, and `handle_each` does the same for a handler that
raises on one record. Dead letters are acknowledged before the offsets move past them.

aiokafka, not kafka-python: on the local broker it consumes about twice as fast (bench/bus.py:
"aiokafka consume" against "kafka-python consume"). Its event loop is private and is driven
from the calling thread only inside a call, so the class is as synchronous as before.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import CommitFailedError, IllegalStateError, KafkaError

from schemas.envelope import Event
from schemas.topics import Topic
from streams.codec import decode
from streams.dlq import DeadLetterRouter, error_sentence
from streams.lifecycle import Closing
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

#: Client settings of every consumer of the loop.
CONSUMER_DEFAULTS: dict[str, Any] = {
    # We commit by hand after side effects: at-least-once.
    "enable_auto_commit": False,
    # Tansu's first JoinGroup waits session_timeout/2 (DESIGN.md): 6 s keeps that at 3 s while
    # still tolerating a GC pause; the heartbeat is a third of it, as Kafka recommends.
    "session_timeout_ms": 6000,
    "heartbeat_interval_ms": 2000,
    # A step may write and fsync a big batch between polls; five minutes (Kafka's default)
    # keeps a slow disk from costing the member its place in the group.
    "max_poll_interval_ms": 300_000,
}
#: Records per poll: big enough to amortise a sink transaction, small enough to keep memory low.
DEFAULT_MAX_RECORDS = 500
#: Wait per poll when nothing is there; short so loops notice shutdown quickly.
DEFAULT_POLL_MS = 1000
#: Joins, commits and metadata calls wait at most this long before the call gives up.
CALL_TIMEOUT_S = 60.0
#: A commit or committed-offset query waits at most this long: a dead broker must not stall a
#: loop (an uncommitted batch is only re-read, and sinks skip what they already have).
COMMIT_TIMEOUT_S = 5.0
#: Leaving the group on close waits at most this long (a dead broker must not hang a stop).
CLOSE_TIMEOUT_S = 10.0
#: A poll may overrun its timeout by this much (aiokafka waits out a rebalance inside getmany,
#: ~3 s on Tansu) before it returns empty, so loops still check their stop flags.
POLL_GRACE_S = 1.0

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RawRecord:
    """A message as it came off the wire, before decoding."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...]
    timestamp_ms: int


@dataclass(frozen=True, slots=True)
class Record(RawRecord):
    """A message and the valid event decoded from it (None on a raw pass-through topic)."""

    event: Event | None = None


ErrorHandler = Callable[[RawRecord, BaseException], ErrorAction]


def dead_letter_all(record: RawRecord, error: BaseException) -> ErrorAction:
    """The default: every bad message goes to the dead-letter topic and consumption goes on."""
    return "dead-letter"


def raise_all(record: RawRecord, error: BaseException) -> ErrorAction:
    """Stops at the first bad message (tools that must not skip anything)."""
    return "raise"


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
        """Cancels what the client left running (a dead broker leaves retries behind), then
        closes the loop."""
        try:
            pending = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        finally:
            self.loop.close()


class _Revocations(ConsumerRebalanceListener):  # type: ignore[misc]
    """Forgets pending offsets of partitions a rebalance takes away (their new owner re-reads
    them) and tells the owner of the consumer, so it can drop what it buffered for them."""

    def __init__(self, owner: TypedBatchConsumer) -> None:
        self.owner = owner

    async def on_partitions_revoked(self, revoked: Iterable[TopicPartition]) -> None:
        self.owner._revoked(set(revoked))

    async def on_partitions_assigned(self, assigned: Iterable[TopicPartition]) -> None:
        self.owner.rebalances += 1
        # Records drained after this are of the new assignment (see `poll_batch`).
        self.owner._revoked_in_poll = set()


class TypedBatchConsumer(Closing):
    """Polls batches of valid events from registered topics as one consumer group member.

    Bad messages go to `<topic>.dlq` (or raise, as `on_error` decides). `commit()` commits
    everything returned so far: call it after the batch's side effects are durable.
    `raw_topics` are read as they are (event None; the archiver reads dead-letter topics so).
    `on_revoked` hears of partitions a rebalance took away, before their new owner reads them.
    `partitions(topic, count)`, when given, assigns partitions by hand instead of joining the
    group (the group id then only keeps the offsets). `wanted(key)`, when given, picks the
    records to read by their key before anything is decoded: the others are passed over
    (their offsets still advance), so a reader of a shared topic decodes only its own.
    """

    def __init__(self, bootstrap: str, topics: Sequence[Topic], group_id: str | None, *,
                 on_error: ErrorHandler = dead_letter_all,
                 auto_offset_reset: Literal["earliest", "latest"] = "earliest",
                 max_records: int = DEFAULT_MAX_RECORDS,
                 max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                 dead_letters: DeadLetterRouter | None = None,
                 client_id: str = "flywheel",
                 raw_topics: Sequence[str] = (),
                 on_revoked: Callable[[set[TopicPartition]], None] | None = None,
                 data_dir: Path | None = None,
                 partitions: Callable[[str, int], Sequence[int]] | None = None,
                 wanted: Callable[[bytes | None], bool] | None = None,
                 **kafka_kwargs: Any) -> None:
        if not topics and not raw_topics:
            raise ValueError("TypedBatchConsumer needs at least one topic")
        self.topics = {t.name: t for t in topics}
        self.raw_topics = frozenset(raw_topics)
        self.wanted = wanted
        #: Records `wanted` passed over, undecoded.
        self.passed_over = 0
        self.on_error = on_error
        self.on_revoked = on_revoked
        self.max_records = max_records
        self.max_message_bytes = max_message_bytes
        self.group_id = group_id
        self.client_id = client_id  # names the consumer in its dead letters when it has no group
        self._owns_router = dead_letters is None
        # The router's own size limit is the producer's request limit, not `max_message_bytes`
        # (what this consumer accepts): a record it refuses may still be dead-lettered whole.
        self._router = dead_letters or DeadLetterRouter(
            bootstrap, client_id=f"{client_id}-dlq", data_dir=data_dir)
        self._pending: dict[TopicPartition, int] = {}
        #: Partitions a rebalance revoked during the current poll (see `poll_batch`).
        self._revoked_in_poll: set[TopicPartition] = set()
        self.dead_lettered = 0
        self.rebalances = 0
        config = {**CONSUMER_DEFAULTS, "auto_offset_reset": auto_offset_reset,
                  "max_poll_records": max_records, **kafka_kwargs}
        names = [*self.topics, *sorted(self.raw_topics - set(self.topics))]
        self._loop = _Runner()
        try:
            self._consumer = self._loop.call(self._start(bootstrap, names, group_id, client_id,
                                                         config, partitions))
        except BaseException:
            self._loop.close()
            if self._owns_router:
                self._router.close()
            raise

    async def _start(self, bootstrap: str, names: list[str], group_id: str | None,
                     client_id: str, config: dict[str, Any],
                     partitions: Callable[[str, int], Sequence[int]] | None
                     ) -> AIOKafkaConsumer:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group_id,
                                    client_id=client_id, **config)
        try:
            if partitions is not None:
                # Manual assignment (the device farm): `partitions(topic, count)` picks the
                # partitions to read; the group, if any, only stores their offsets.
                await consumer.start()
                await consumer.topics()  # loads the metadata the partition counts come from
                parts = []
                for name in names:
                    count = len(consumer.partitions_for_topic(name) or ())
                    if not count and name in self.topics:
                        count = self.topics[name].partitions
                    parts += [TopicPartition(name, p) for p in partitions(name, count)]
                consumer.assign(parts)
                for tp in parts:  # positioned now (committed offset, else the reset policy),
                    await consumer.position(tp)  # so 'latest' keeps what is sent after start
                return consumer
            if group_id is not None:
                # Subscribed before start(): start() then returns once the group is joined and
                # partitions are assigned, so the first poll finds data ready (Tansu's first
                # JoinGroup waits half the session timeout; no poll should pay for it).
                consumer.subscribe(names, listener=_Revocations(self))
            await consumer.start()
            if group_id is None:  # no group: read every partition of the topics
                parts = [TopicPartition(n, p) for n in names
                         for p in sorted(consumer.partitions_for_topic(n) or ())]
                consumer.assign(parts)
        except BaseException:
            await consumer.stop()
            raise
        return consumer

    # ---- reading ---------------------------------------------------------------------------

    def poll_batch(self, timeout_ms: int = DEFAULT_POLL_MS) -> list[Record]:
        """One poll: the valid records, in partition order; bad ones are dead-lettered."""
        self._revoked_in_poll = set()
        try:
            polled = self._loop.call(self._consumer.getmany(timeout_ms=timeout_ms,
                                                            max_records=self.max_records),
                                     timeout_ms / 1000 + POLL_GRACE_S)
        except TimeoutError:  # a rebalance in progress: the caller checks its stop flag
            return []
        gone, self._revoked_in_poll = self._revoked_in_poll, set()
        if gone:
            # aiokafka drains the records, then runs its loop a few more turns before the call
            # returns, and a rebalance's revocation can land there (with no new assignment
            # yet: that needs round trips, and a drain waits for it): the records belong to
            # the old assignment, whose position is reset, and their owner re-reads them.
            # Returned, the archiver buffered them after dropping the earlier rows of those
            # partitions and wrote a watermark over the dropped rows: the re-read was skipped.
            kept = {tp: m for tp, m in polled.items() if tp not in gone}
            dropped = sum(len(m) for tp, m in polled.items() if tp in gone)
            if dropped:
                logger.info("a rebalance during the poll revoked their partitions: %d polled "
                            "records are left to be read again", dropped)
            polled = kept
        out: list[Record] = []
        append = out.append
        wanted = self.wanted
        for tp, messages in polled.items():
            if not messages:
                continue
            topic = self.topics.get(tp.topic)  # None: a raw pass-through topic
            for m in messages:
                if wanted is not None and not wanted(m.key):
                    self.passed_over += 1
                    continue
                headers = tuple(m.headers or ())
                event = None
                if topic is not None:
                    try:
                        event = decode(m.value, topic, self.max_message_bytes, key=m.key)
                    except Exception as error:  # noqa: BLE001 - no record may stop a consumer
                        self._handle(RawRecord(m.topic, m.partition, m.offset, m.key, m.value,
                                               headers, m.timestamp), error)
                        continue
                append(Record(m.topic, m.partition, m.offset, m.key, m.value, headers,
                              m.timestamp, event))
            self._pending[tp] = messages[-1].offset + 1
        return out

    def _handle(self, raw: RawRecord, error: BaseException) -> None:
        try:
            action = self.on_error(raw, error)
        except Exception as handler_error:  # noqa: BLE001 - a broken handler must not stop us
            logger.error("the error handler failed (%s); dead-lettering the record",
                         error_sentence(handler_error))
            action = "dead-letter"
        if action == "raise":
            raise error
        if action != "dead-letter":
            logger.error("the error handler returned %r (not 'dead-letter' or 'raise'); "
                         "dead-lettering the record", action)
        self.dead_letter(raw, error)

    def dead_letter(self, record: RawRecord, error: BaseException) -> None:
        """Sends `record` to its dead-letter topic (acknowledged before the next commit)."""
        self._router.route(record.topic, record.partition, record.offset, record.key,
                           record.value, error, record.headers, consumer=self.group_id or self.client_id)
        self.dead_lettered += 1

    def handle_each(self, records: Iterable[Record], handler: Callable[[Record], T]
                    ) -> list[T]:
        """`handler(record)` for each record; one that raises is dead-lettered (with the
        exception as its error) and the rest go on. Returns the handlers' results."""
        results: list[T] = []
        for record in records:
            try:
                results.append(handler(record))
            except Exception as error:  # noqa: BLE001 - no record may stop a consumer
                logger.error("handling %s[%d]@%d failed (%s: %s); dead-lettering it",
                             record.topic, record.partition, record.offset,
                             type(error).__name__, error_sentence(error))
                self.dead_letter(record, error)
        return results

    def _revoked(self, revoked: set[TopicPartition]) -> None:
        self._revoked_in_poll |= revoked
        lost = {tp for tp in revoked if tp in self._pending}
        for tp in lost:
            del self._pending[tp]
        if revoked:
            logger.info("a rebalance took %d partitions (%d with uncommitted records, which "
                        "their new owner re-reads)", len(revoked), len(lost))
        if self.on_revoked is not None and revoked:
            self.on_revoked(revoked)

    # ---- committing ------------------------------------------------------------------------

    def commit(self) -> None:
        """Commits everything returned so far, after the dead letters are acknowledged."""
        if not self._pending:
            return
        self._router.flush()
        pending, self._pending = self._pending, {}
        if self.group_id is None:
            return
        try:
            self._loop.call(self._commit(pending), COMMIT_TIMEOUT_S)
        except (TimeoutError, KafkaError, OSError) as error:
            # Kept for the next commit; if none comes, the records are re-read (at least once).
            for tp, offset in pending.items():
                self._pending[tp] = max(offset, self._pending.get(tp, 0))
            logger.warning("commit failed (%s); it is retried with the next batch",
                           error_sentence(error) if str(error) else type(error).__name__)

    async def _commit(self, pending: dict[TopicPartition, int]) -> None:
        assigned = self._consumer.assignment()
        offsets = {tp: offset for tp, offset in pending.items() if tp in assigned}
        if not offsets:
            return
        try:
            await self._consumer.commit(offsets)
        except (CommitFailedError, IllegalStateError):
            # A rebalance moved the partitions: the new owner re-reads them (at-least-once).
            logger.warning("commit failed after a rebalance; %d partitions will be re-read",
                           len(offsets))

    def committed(self, tp: TopicPartition) -> int | None:
        """The group's committed offset of `tp` (None when nothing was committed, or when the
        broker does not answer in time)."""
        try:
            return self._loop.call(self._consumer.committed(tp), COMMIT_TIMEOUT_S)
        except (TimeoutError, KafkaError, OSError) as error:
            logger.warning("cannot read the committed offset of %s[%d] (%s)", tp.topic,
                           tp.partition, error_sentence(error) if str(error) else
                           type(error).__name__)
            return None

    def seek_to_end(self) -> None:
        """Moves every assigned partition to its end now (not lazily at the first fetch), so
        a reader of replies sees every record produced after this returns."""
        async def seek() -> None:
            await self._consumer.seek_to_end()
            for tp in self._consumer.assignment():
                await self._consumer.position(tp)

        self._loop.call(seek())

    def assignment(self) -> set[TopicPartition]:
        return set(self._consumer.assignment())

    def partitions_for(self, topic: str) -> set[int]:
        return set(self._consumer.partitions_for_topic(topic) or ())

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

    @property
    def router(self) -> DeadLetterRouter:
        return self._router

    def close(self) -> None:
        """Leaves the group (uncommitted records are redelivered) and closes the clients."""
        try:
            self._router.flush()
        finally:
            try:
                self._loop.call(self._consumer.stop(), CLOSE_TIMEOUT_S)
            except (TimeoutError, KafkaError, OSError, asyncio.CancelledError) as error:
                logger.warning("the consumer did not leave its group cleanly (%s)",
                               error_sentence(error) if str(error) else type(error).__name__)
            finally:
                self._loop.close()
                if self._owns_router:
                    self._router.close()
