"""Replay of an archive into a fresh broker: the same events, bytes, keys and order come back,
and the archiver over the replayed broker adds nothing."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from kafka import KafkaConsumer, TopicPartition

from schemas.topics import Topic
from services.archiver.loop import Archiver
from services.archiver.replay import ReplayError, ensure_replay_topics, replay_archive
from services.archiver.rows import new_rows, to_table
from services.archiver.settings import ArchiverSettings
from services.archiver.sources import ArchiverSource
from services.archiver.store import ArchiveStore
from streams.broker import LocalBroker
from streams.producer import TypedProducer
from tests.services.archiver.helpers import record_of, task

pytestmark = pytest.mark.integration

#: Guards against hangs only; not a speed assertion.
CATCH_UP_S = 90.0
EVENTS = 300


def _archive(bootstrap: str, topic: Topic, store: ArchiveStore) -> None:
    with TypedProducer(bootstrap, client_id="test-replay-producer") as producer:
        for i in range(EVENTS):
            producer.send(topic, task(i, pad=100))
        producer.send_raw(topic.name, b"\xff not utf-8", key=b"bad")
    settings = ArchiverSettings(archive_dir=store.root, flush_interval_s=0.3,
                                group_id=f"archiver-{topic.name}")
    source = ArchiverSource(bootstrap, [topic], settings.group_id)
    archiver = Archiver(source, store, settings)
    deadline = time.monotonic() + CATCH_UP_S
    try:
        archiver.run(lambda: archiver.stats.archived_total >= EVENTS + 1
                     or time.monotonic() > deadline)
    finally:
        source.close()


def _read_all(bootstrap: str, name: str, expected: int) -> list[tuple[int, int, bytes, bytes]]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None,
                             auto_offset_reset="earliest", enable_auto_commit=False)
    try:
        parts = [TopicPartition(name, p) for p in sorted(consumer.partitions_for_topic(name))]
        consumer.assign(parts)
        consumer.seek_to_beginning(*parts)
        out: list[tuple[int, int, bytes, bytes]] = []
        deadline = time.monotonic() + CATCH_UP_S
        while len(out) < expected and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                out.extend((r.partition, r.offset, r.key, r.value) for r in records)
        return out
    finally:
        consumer.close()


def test_replay_into_fresh_broker_gives_same_events(
        bootstrap: str, fresh_topic: Callable[[str], Topic], tmp_path: Path) -> None:
    topic = fresh_topic("flywheel.tasks")
    store = ArchiveStore(tmp_path / "archive")
    _archive(bootstrap, topic, store)
    archived = store.read([topic.name]).sort_by([("partition", "ascending"),
                                                 ("offset", "ascending")])
    assert archived.num_rows == EVENTS

    with LocalBroker.on_free_port(tmp_path / "fresh") as fresh:
        ensure_replay_topics(fresh.bootstrap, store)
        report = replay_archive(store, fresh.bootstrap)
        assert report.counts == {topic.name: EVENTS, topic.dlq: 1}

        back = _read_all(fresh.bootstrap, topic.name, EVENTS)
        # Same bytes under the same keys, in the same partitions at the same offsets.
        assert sorted(back) == sorted(zip(archived["partition"].to_pylist(),
                                          archived["offset"].to_pylist(),
                                          archived["key"].to_pylist(),
                                          [p.encode() for p in archived["payload"].to_pylist()],
                                          strict=True))
        [letter] = _read_all(fresh.bootstrap, topic.dlq, 1)
        assert letter[3] == b"\xff not utf-8"

        # The archiver over the replayed broker recognises everything: nothing archived twice.
        settings = ArchiverSettings(archive_dir=store.root, flush_interval_s=0.3,
                                    group_id="archiver-after-replay")
        source = ArchiverSource(fresh.bootstrap, [topic], settings.group_id)
        again = Archiver(source, store, settings)
        deadline = time.monotonic() + CATCH_UP_S
        try:
            again.run(lambda: again.stats.polled >= EVENTS + 1 or time.monotonic() > deadline)
        finally:
            source.close()
        assert again.stats.polled == EVENTS + 1
        assert again.stats.duplicates == EVENTS + 1 and again.stats.archived_total == 0
    ids = store.read([topic.name], columns=["event_id"])["event_id"].to_pylist()
    assert sorted(ids) == sorted({task(i).event_id for i in range(EVENTS)})


def test_replay_of_unknown_topic_is_one_sentence(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path)
    store.write(to_table(new_rows([record_of(task(1))], set()), 1))
    with pytest.raises(ReplayError, match="has no topic 'flywheel.nope'"):
        replay_archive(store, "127.0.0.1:1", ["flywheel.nope"])
