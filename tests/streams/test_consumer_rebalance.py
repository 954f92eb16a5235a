"""A rebalance that lands inside a poll: records drained for the old assignment are not returned
(their new owner re-reads them), records of a new assignment are."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiokafka import TopicPartition

from streams.consumer import TypedBatchConsumer, _Revocations, _Runner

TP = TopicPartition("raw.topic", 0)


@dataclass
class Msg:
    topic: str
    partition: int
    offset: int
    key: bytes | None = None
    value: bytes | None = b"x"
    headers: tuple[tuple[str, bytes], ...] = ()
    timestamp: int = 0


class FakeClient:
    """aiokafka's getmany as seen from outside: it drains, then the loop runs the coordinator
    (a revocation, and with `assign_after`, a new assignment) before the call returns."""

    def __init__(self, listener: _Revocations, *, assign_after: bool) -> None:
        self.listener = listener
        self.assign_after = assign_after

    async def getmany(self, timeout_ms: int, max_records: int) -> dict[TopicPartition, Any]:
        drained = {TP: [Msg(TP.topic, TP.partition, o) for o in range(10, 15)]}
        await self.listener.on_partitions_revoked({TP})
        if self.assign_after:
            await self.listener.on_partitions_assigned({TP})
        return drained


def _consumer(*, assign_after: bool) -> tuple[TypedBatchConsumer, list[set[TopicPartition]]]:
    heard: list[set[TopicPartition]] = []
    consumer = object.__new__(TypedBatchConsumer)  # no broker: the poll logic only
    consumer.topics, consumer.raw_topics = {}, frozenset({TP.topic})
    consumer.max_records, consumer.max_message_bytes = 100, 1 << 20
    consumer.on_revoked, consumer.rebalances = heard.append, 0
    consumer._pending, consumer._revoked_in_poll = {}, set()
    consumer.wanted, consumer.passed_over = None, 0
    consumer._loop = _Runner()
    consumer._consumer = FakeClient(_Revocations(consumer), assign_after=assign_after)
    return consumer, heard


def test_records_drained_before_a_revocation_in_the_same_poll_are_not_returned() -> None:
    consumer, heard = _consumer(assign_after=False)
    try:
        assert consumer.poll_batch(10) == []
        assert heard == [{TP}]
        assert consumer._pending == {}  # nothing to commit past: the owner re-reads 10..14
    finally:
        consumer._loop.close()


def test_records_of_a_new_assignment_in_the_same_poll_are_returned() -> None:
    consumer, _ = _consumer(assign_after=True)
    try:
        assert [r.offset for r in consumer.poll_batch(10)] == [10, 11, 12, 13, 14]
        assert consumer._pending == {TP: 15}
    finally:
        consumer._loop.close()
