"""Exactly once across crashes: a crash point in the archiver's input, then a resumed run."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from schemas.topics import Topic
from services.archiver.loop import Archiver
from services.archiver.rows import DEAD_LETTER_ID_PREFIX
from services.archiver.settings import ArchiverSettings
from services.archiver.sources import ArchiverRecord, ArchiverSource
from services.archiver.store import ArchiveStore
from streams.producer import TypedProducer
from tests.services.archiver.helpers import task

pytestmark = pytest.mark.integration

#: Upper bound on waiting for the archive to catch up; a guard against hangs, not a speed test.
CATCH_UP_S = 90.0
EVENTS = 400


class Crash(RuntimeError):
    """The injected crash."""


class CrashingSource:
    """The real source, crashing after `after` records were delivered (in poll) or at the first
    commit after that (after the archiver wrote its files but before the offsets moved)."""

    def __init__(self, inner: ArchiverSource, after: int, where: str, store: ArchiveStore
                 ) -> None:
        self.inner, self.after, self.where, self.delivered = inner, after, where, 0
        self.store = store
        self.committed_ids: set[str] = set()  # archived ids whose offsets were committed

    def poll_batch(self, timeout_ms: int) -> Sequence[ArchiverRecord]:
        if self.where == "poll" and self.delivered >= self.after:
            raise Crash(f"crash after {self.delivered} records")
        batch = self.inner.poll_batch(timeout_ms)
        self.delivered += len(batch)
        return batch

    def commit(self) -> None:
        if self.where == "commit" and self.delivered >= self.after:
            raise Crash(f"crash before committing {self.delivered} records")
        self.inner.commit()
        self.committed_ids = self.store.event_ids()


def _produce(bootstrap: str, topic: Topic) -> set[str]:
    with TypedProducer(bootstrap, client_id="test-archiver-producer") as producer:
        for i in range(EVENTS):
            producer.send(topic, task(i, day=1 + i % 3, pad=200))
        producer.send(topic, task(7, day=2, pad=200))  # an at-least-once duplicate
        producer.send_raw(topic.name, b"{not json", key=b"bad")  # dead-lettered, then archived
    return {task(i).event_id for i in range(EVENTS)}


def _run_until(archiver: Archiver, done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + CATCH_UP_S
    archiver.run(lambda: done() or time.monotonic() > deadline)


def _archived_ids(store: ArchiveStore, topic: Topic) -> list[str]:
    return store.read([topic.name], columns=["event_id"])["event_id"].to_pylist()


@pytest.mark.parametrize("where", ["poll", "commit"])
def test_crash_then_resume_archives_each_event_once(
        bootstrap: str, fresh_topic: Callable[[str], Topic], tmp_path: Path, where: str) -> None:
    topic = fresh_topic("flywheel.tasks")
    expected = _produce(bootstrap, topic)
    store = ArchiveStore(tmp_path / "archive")
    settings = ArchiverSettings(archive_dir=store.root, flush_interval_s=0.5,
                                flush_max_events=60, group_id=f"archiver-{topic.name}")

    first_source = ArchiverSource(bootstrap, [topic], settings.group_id, max_records=50)
    crashing = CrashingSource(first_source, after=150, where=where, store=store)
    first = Archiver(crashing, store, settings)
    with pytest.raises(Crash):
        _run_until(first, lambda: False)
    first_source.close()  # the process died: nothing more is flushed or committed
    after_crash = set(_archived_ids(store, topic))
    assert 0 < len(after_crash) < EVENTS  # the crash really was mid-stream

    second_source = ArchiverSource(bootstrap, [topic], settings.group_id, max_records=50)
    second = Archiver(second_source, store, settings)
    try:
        _run_until(second, lambda: expected <= second.seen
                   and any(i.startswith(DEAD_LETTER_ID_PREFIX) for i in second.seen))
    finally:
        second_source.close()

    ids = _archived_ids(store, topic)
    assert len(ids) == len(set(ids)), "an event was archived twice"
    assert set(ids) == expected, "an event was lost"
    assert len(_archived_ids(store, Topic(topic.dlq, "", 1, "delete", (), ""))) == 1
    # Redelivered events are skipped: in the commit case every event whose file was written
    # but whose offset was not committed (by the second run), and the produced duplicate (by
    # whichever run met it second; the batch order across partitions is the client's choice).
    uncommitted = after_crash - crashing.committed_ids
    assert (len(uncommitted) > 0) == (where == "commit")
    assert second.stats.duplicates >= len(uncommitted)
    assert first.stats.duplicates + second.stats.duplicates >= len(uncommitted) + 1
