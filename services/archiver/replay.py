"""Re-publish an archive into a broker, byte for byte, in (topic, partition, offset) order."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import pyarrow.compute as pc
from kafka import KafkaProducer
from kafka.errors import KafkaError

from schemas.topics import DLQ_SUFFIX, TOPICS, Topic
from services.archiver.store import ArchiveStore
from streams.admin import commit_group_offsets, create_topics
from streams.settings import DEFAULT_MAX_MESSAGE_BYTES

__all__ = ["ReplayError", "ReplayReport", "ensure_replay_topics", "replay_archive"]

logger = logging.getLogger(__name__)

#: Batches of up to 1 MiB with a few ms of linger: replay is bulk, throughput over latency.
BATCH_BYTES = 1024 * 1024
LINGER_MS = 5
#: Room for the record overhead (key, headers, batch header) above the largest event.
REQUEST_OVERHEAD_BYTES = 64 * 1024
#: Progress is reported every this many records (and at the end of each topic).
PROGRESS_EVERY = 5_000
#: A flush waits this long for the broker to acknowledge everything sent.
FLUSH_TIMEOUT_S = 120.0

ProgressCallback = Callable[[str, int, int], None]  # (topic, done, total)


class ReplayError(RuntimeError):
    """The archive could not be re-published (one sentence)."""


@dataclass
class ReplayReport:
    """Records re-published per topic."""

    counts: dict[str, int] = field(default_factory=dict)
    #: (topic, partition) → the next offset after the re-published records.
    ends: dict[tuple[str, int], int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def _producer(bootstrap: str) -> KafkaProducer:
    try:
        # Idempotence keeps per-partition order across retries with several requests in flight.
        return KafkaProducer(
            bootstrap_servers=bootstrap, client_id="flywheel-replay", acks="all",
            enable_idempotence=True, linger_ms=LINGER_MS, batch_size=BATCH_BYTES,
            max_request_size=DEFAULT_MAX_MESSAGE_BYTES + REQUEST_OVERHEAD_BYTES,
        )
    except KafkaError as error:
        raise ReplayError(f"cannot reach Kafka at {bootstrap} ({type(error).__name__}); start "
                          f"the broker or fix KAFKA_BOOTSTRAP_SERVERS") from None


def ensure_replay_topics(bootstrap: str, store: ArchiveStore,
                         topics: Iterable[str] | None = None) -> list[str]:
    """Creates the topics a replay writes to: registered ones (with their dead-letter topics) as
    the registry says, others (tests' renamed copies) with as many partitions as the archive
    shows, so every record can go back to its partition. Existing topics are left alone."""
    names = list(topics) if topics is not None else store.topics()
    registered = [TOPICS[n] for n in names if n in TOPICS]
    others = []
    for name in names:
        base = name.removesuffix(DLQ_SUFFIX)
        if name in TOPICS or (name != base and base in TOPICS):
            continue
        partitions = pc.max(store.read([name], columns=["partition"])["partition"]).as_py()
        others.append(Topic(name, "event_id", (partitions or 0) + 1, "delete", (),
                            "re-created by archive replay"))
    create_topics(bootstrap, registered, with_dlq=True)
    if others:
        create_topics(bootstrap, others, with_dlq=False)
    return names


def replay_archive(store: ArchiveStore, bootstrap: str, topics: Iterable[str] | None = None,
                   on_progress: ProgressCallback | None = None, *,
                   archiver_group: str | None = None) -> ReplayReport:
    """Produces every archived record of `topics` (default: all archived, dead letters too)
    with its original key, bytes, headers and timestamp, to its original partition when the
    target topic has it (else the key picks), partition by partition in offset order.

    The target topics must exist. Consumers dedupe on event id, so replaying into a broker
    that already holds some of the events changes nothing downstream.
    """
    store.require()
    names = sorted(topics) if topics is not None else store.topics()
    missing = [t for t in names if t not in store.topics()]
    if missing:
        raise ReplayError(f"the archive at {store.root} has no topic {missing[0]!r}; see "
                          f"`flywheel archive stats` for the archived topics")
    report = ReplayReport()
    producer = _producer(bootstrap)
    ends: dict[tuple[str, int], int] = {}
    try:
        for name in names:
            report.counts[name] = _replay_topic(store, producer, name, on_progress, ends)
        producer.flush(timeout=FLUSH_TIMEOUT_S)
    except KafkaError as error:
        raise ReplayError(f"re-publishing to {bootstrap} failed ({type(error).__name__}: "
                          f"{error}); check the broker and run the replay again (consumers "
                          f"dedupe, so a second replay is safe)") from None
    finally:
        producer.close()
    if archiver_group is not None:
        # The fresh broker's offsets start from 0: the archive's watermarks now describe it, and
        # the archiver's group starts after what was re-published instead of reading it back.
        store.reset_watermarks(ends)
        commit_group_offsets(bootstrap, archiver_group, ends)
    report.ends = ends
    return report


def _contiguous_from_zero(offsets: list[int]) -> int:
    """How many offsets from 0 on the replay wrote without a gap. A record another producer
    sent during the replay takes an offset in between: the archiver must read from there,
    so its position (and watermark) is set only up to the first such gap."""
    expected = 0
    for offset in sorted(offsets):
        if offset != expected:
            if offset > expected:
                logger.warning("another producer wrote during the replay (at offset %d); the "
                               "archiver reads from there on", expected)
            break
        expected += 1
    return expected


def _replay_topic(store: ArchiveStore, producer: KafkaProducer, name: str,
                  on_progress: ProgressCallback | None,
                  ends: dict[tuple[str, int], int] | None = None) -> int:
    table = store.read_for_replay(name)
    total = table.num_rows
    partitions = producer.partitions_for(name)
    if not partitions:
        raise ReplayError(f"topic {name!r} does not exist on the target broker; create it "
                          f"first (`flywheel run` and `flywheel archive replay` do)")
    cols = {c: table[c].to_pylist() for c in
            ("partition", "timestamp_ms", "key", "payload", "raw", "headers")}
    futures = []
    offsets: dict[int, list[int]] = {}
    for i in range(total):
        payload = cols["payload"][i]
        value = payload.encode("utf-8") if payload is not None else cols["raw"][i]
        partition = cols["partition"][i]
        headers = [(h["key"], h["value"]) for h in cols["headers"][i] or ()]
        futures.append(producer.send(
            name, value=value, key=cols["key"][i], headers=headers,
            partition=partition if partition in partitions else None,
            timestamp_ms=cols["timestamp_ms"][i],
        ))
        if on_progress is not None and (i + 1) % PROGRESS_EVERY == 0:
            on_progress(name, i + 1, total)
    producer.flush(timeout=FLUSH_TIMEOUT_S)
    for future in futures:
        if future.failed():
            raise future.exception
        if ends is not None and future.succeeded():
            meta = future.value
            offsets.setdefault(meta.partition, []).append(meta.offset)
    if ends is not None:
        for partition, got in offsets.items():
            ends[(name, partition)] = _contiguous_from_zero(got)
    if on_progress is not None:
        on_progress(name, total, total)
    logger.info("replayed %d records of %s", total, name)
    return total
