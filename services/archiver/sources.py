"""Where the archiver reads from: typed events of the loop's topics plus raw dead letters, through
the loop's one batch consumer (streams.consumer.TypedBatchConsumer)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from aiokafka import TopicPartition

from schemas.topics import Topic
from streams.consumer import Record, TypedBatchConsumer
from streams.settings import DEFAULT_MAX_MESSAGE_BYTES

__all__ = ["GROUP_TIMING", "MAX_RECORDS", "ArchiverRecord", "ArchiverSource"]

logger = logging.getLogger(__name__)

#: Records per poll: large batches amortise the per-poll cost; 5k × 1 KiB is ~5 MiB in memory.
MAX_RECORDS = 5_000

#: The archiver's group timing: a shorter session than the loop's default (6 s) so a member
#: killed with SIGKILL is evicted sooner and its successor reads again sooner (bench/rejoin.py,
#: start of the new process to its first record: median 11.1 s → 7.1 s on Tansu; 3.0 → 2.0 s
#: on a fresh start); the rebalance timeout matches it so a join does not wait for a dead
#: member longer than its session. Static membership (group_instance_id) was measured too:
#: Tansu makes every join of a static member wait ~6 s, fresh or not, so it is not used.
#: The cost: a flush longer than 3 s (heartbeats run only inside consumer calls) makes the
#: group rebalance; the commit then fails and the watermarks skip what is read again.
GROUP_TIMING: dict[str, int] = {"session_timeout_ms": 3000, "heartbeat_interval_ms": 1000,
                                "rebalance_timeout_ms": 3000}

#: A consumed record as the archiver sees it: `event` is None for a dead letter.
ArchiverRecord = Record


def ArchiverSource(bootstrap: str, topics: Sequence[Topic], group_id: str, *,
                   include_dead_letters: bool = True, max_records: int = MAX_RECORDS,
                   max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                   client_id: str = "flywheel-archiver",
                   on_revoked: Callable[[set[TopicPartition]], None] | None = None,
                   data_dir: Path | None = None, **kafka_kwargs: object) -> TypedBatchConsumer:
    """One consumer group member over the event topics and (by default) their dead-letter
    topics, which pass through as bytes. Event records are decoded (a bad one is dead-lettered,
    as every consumer does; the archive then gets it from the dead-letter topic). One member
    rather than two keeps one group join (slow on Tansu) and one poll per step. Offsets are
    committed only by `commit`, which the archiver calls after its files are in place."""
    if not topics:
        raise ValueError("the archiver needs at least one topic")
    raw = [t.dlq for t in topics] if include_dead_letters else []
    return TypedBatchConsumer(bootstrap, topics, group_id, raw_topics=raw,
                              max_records=max_records, max_message_bytes=max_message_bytes,
                              client_id=client_id, on_revoked=on_revoked, data_dir=data_dir,
                              **{**GROUP_TIMING, **kafka_kwargs})
