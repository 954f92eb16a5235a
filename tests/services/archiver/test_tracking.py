"""The archiver's duplicate check without the archive's ids in memory: per-partition watermarks
skip re-delivered offsets, a bounded table of recent ids skips events sent again, start-up
reads a bounded number of ids, and a rebalance between two members duplicates nothing."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from aiokafka import TopicPartition

from schemas.topics import Topic
from services.archiver.loop import Archiver
from services.archiver.rows import new_rows, to_table
from services.archiver.service import build_archiver
from services.archiver.settings import ArchiverSettings
from services.archiver.store import ArchiveStore
from tests.chaos.traffic import Traffic
from tests.services.archiver.helpers import Rec, record_of, task

#: Guards against hangs only; not a speed assertion.
WAIT_S = 90.0


class FakeSource:
    """Batches handed out in order; committed offsets as a broker would answer them."""

    def __init__(self, batches: list[list[Rec]], committed: dict[tuple[str, int], int]) -> None:
        self.batches = batches
        self.offsets = committed
        self.commits = 0

    def poll_batch(self, timeout_ms: int) -> Sequence[Rec]:
        return self.batches.pop(0) if self.batches else []

    def commit(self) -> None:
        self.commits += 1

    def committed(self, tp: object) -> int | None:
        return self.offsets.get((tp.topic, tp.partition))  # type: ignore[attr-defined]


def _settings(tmp_path: Path, **extra: object) -> ArchiverSettings:
    return ArchiverSettings(archive_dir=tmp_path, flush_interval_s=3600, **extra)


def _ids(store: ArchiveStore) -> list[str]:
    return store.read(columns=["event_id"])["event_id"].to_pylist()


def test_offsets_below_a_trusted_watermark_are_skipped_even_when_their_ids_are_forgotten(
        tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path)
    first = [record_of(task(i), offset=i) for i in range(10)]
    archiver = Archiver(FakeSource([first], {}), store, _settings(tmp_path, tracking_ids=1))
    archiver.step()
    archiver.flush()
    assert store.watermark("flywheel.tasks", 0) == 10
    # A crash before the commit: the broker re-delivers 5..9 (committed offset 5), and the
    # recent-id table (1 id) no longer knows them: the watermark does.
    again = [record_of(task(i), offset=i) for i in range(5, 12)]
    second = Archiver(FakeSource([again], {("flywheel.tasks", 0): 5}), store,
                      _settings(tmp_path, tracking_ids=1))
    second.step()
    second.flush()
    ids = _ids(store)
    assert sorted(ids) == sorted(task(i).event_id for i in range(12))
    assert second.stats.duplicates == 5


def test_without_a_committed_offset_the_watermark_is_not_trusted(tmp_path: Path) -> None:
    """A fresh broker starts offsets at 0 again: a stale watermark must not hide new events."""
    store = ArchiveStore(tmp_path)
    store.set_watermarks({("flywheel.tasks", 0): 1000})
    new = [record_of(task(i), offset=i) for i in range(3)]
    archiver = Archiver(FakeSource([new], {}), store, _settings(tmp_path))
    archiver.step()
    archiver.flush()
    assert len(_ids(store)) == 3


def test_an_event_sent_again_at_a_new_offset_is_skipped_by_the_recent_ids(
        tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path)
    archiver = Archiver(FakeSource([[record_of(task(1), offset=0)],
                                    [record_of(task(1), offset=1)]], {}),
                        store, _settings(tmp_path))
    archiver.step()
    archiver.flush()
    archiver.step()
    archiver.flush()
    assert _ids(store) == [task(1).event_id]


def test_start_up_loads_a_bounded_number_of_ids_from_the_newest_files(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path)
    for part in range(5):
        rows = new_rows([record_of(task(part * 1000 + i), offset=part * 1000 + i)
                         for i in range(1000)], set())
        store.write(to_table(rows, 1))
        time.sleep(0.002)  # part files are named by the millisecond
    archiver = Archiver(FakeSource([], {}), store, _settings(tmp_path, tracking_ids=1500))
    assert len(archiver.seen) == 1500
    assert task(4999).event_id in archiver.seen and task(0).event_id not in archiver.seen


class RebalancingSource(FakeSource):
    """A rebalance lands inside a committed-offset query, as aiokafka's does: its callback
    (the archiver's `revoked`) runs while the archiver is in the middle of a polled batch."""

    def __init__(self, batches: list[list[Rec]], committed: dict[tuple[str, int], int],
                 on_revoked: Callable[[set[Any]], None], revoke_on: tuple[str, int]) -> None:
        super().__init__(batches, committed)
        self.on_revoked = on_revoked
        self.revoke_on = revoke_on
        self.rebalances = 0

    def committed(self, tp: object) -> int | None:
        key = (tp.topic, tp.partition)  # type: ignore[attr-defined]
        if key == self.revoke_on and not self.rebalances:
            self.rebalances += 1
            # Eager protocol: every assigned partition is revoked (the same ones come back).
            self.on_revoked({TopicPartition("flywheel.tasks", p) for p in (0, 1)})
        return super().committed(tp)


def test_a_rebalance_inside_a_batch_loses_no_buffered_record(tmp_path: Path) -> None:
    """Partition 0's rows 0..9 are buffered; the next batch opens with partition 1, whose
    committed offset is asked for (it has a watermark), and the rebalance revokes both there.
    The revocation drops the buffered rows 0..9, and the broker re-delivers partition 0 from
    its committed offset 0: the rest of that batch (partition 0's 10..19) must not be archived
    with a watermark of 20, or the re-delivered 0..9 are skipped as archived and lost."""
    store = ArchiveStore(tmp_path)
    store.set_watermarks({("flywheel.tasks", 1): 100})
    p0 = [record_of(task(i), partition=0, offset=i) for i in range(20)]
    p1 = [record_of(task(100 + i), partition=1, offset=100 + i) for i in range(5)]
    holder: list[Archiver] = []
    source = RebalancingSource(
        [p0[:10], p1 + p0[10:], p1 + p0],  # the third: re-delivered from the committed offsets
        {("flywheel.tasks", 0): 0, ("flywheel.tasks", 1): 100},
        on_revoked=lambda tps: holder[0].revoked(tps), revoke_on=("flywheel.tasks", 1))
    archiver = Archiver(source, store, _settings(tmp_path))
    holder.append(archiver)
    archiver.step()  # buffers partition 0's 0..9 (no flush is due)
    archiver.step()  # the rebalance lands here
    archiver.flush()
    archiver.step()  # the re-delivery
    archiver.flush()
    assert source.rebalances == 1
    ids = _ids(store)
    expected = {task(i).event_id for i in range(20)} | {task(100 + i).event_id for i in range(5)}
    assert expected - set(ids) == set(), "lost"
    assert len(ids) == len(set(ids)) == len(expected), "duplicated"
    assert store.watermark("flywheel.tasks", 0) == 20


@pytest.mark.integration
def test_a_rebalance_between_two_members_duplicates_and_loses_nothing(
        bootstrap: str, fresh_topic: Callable[[str], Topic], tmp_path: Path) -> None:
    topic = fresh_topic("flywheel.tasks")
    group = f"arch-{uuid.uuid4().hex[:8]}"
    settings = ArchiverSettings(archive_dir=tmp_path, group_id=group, flush_interval_s=0.3,
                                include_dead_letters=False)
    traffic = Traffic(bootstrap, topic, task, rate=800, limit=6000).start()
    members: list[tuple[Archiver, threading.Event, threading.Thread]] = []
    errors: list[BaseException] = []

    def join() -> tuple[Archiver, threading.Event, threading.Thread]:
        stop = threading.Event()
        ready = threading.Event()
        holder: list[Archiver] = []

        def work() -> None:
            try:
                archiver, source = build_archiver(bootstrap, settings, tmp_path,
                                                  topics=[topic], data_dir=tmp_path)
                holder.append(archiver)
                ready.set()
                try:
                    archiver.run(stop.is_set)
                finally:
                    source.close()
            except BaseException as error:  # noqa: BLE001 - re-raised in the test
                errors.append(error)
                ready.set()

        thread = threading.Thread(target=work, daemon=True)
        thread.start()
        ready.wait(WAIT_S)
        return holder[0], stop, thread

    store = ArchiveStore(tmp_path)
    members.append(join())
    deadline = time.monotonic() + WAIT_S
    while members[0][0].stats.archived_total < 1000 and time.monotonic() < deadline:
        time.sleep(0.05)
    members.append(join())  # the group rebalances: partitions move from the first member
    time.sleep(3)
    members[0][1].set()  # the first member leaves: everything moves to the second
    members[0][2].join(30)
    traffic.done.wait(WAIT_S)
    acked = traffic.acked_ids()
    while not acked <= set(_ids(store)) and time.monotonic() < deadline and not errors:
        time.sleep(0.1)
    members[1][1].set()
    members[1][2].join(30)
    assert not errors, errors
    ids = _ids(store)
    assert len(acked) == 6000
    assert acked - set(ids) == set(), "lost"
    assert len(ids) == len(set(ids)), "duplicated"
    assert members[0][0].stats.archived_total > 0 and members[1][0].stats.archived_total > 0


def test_the_replay_positions_the_archiver_only_up_to_a_gap() -> None:
    from services.archiver.replay import _contiguous_from_zero

    assert _contiguous_from_zero([2, 0, 1]) == 3
    assert _contiguous_from_zero([0, 1, 3, 4]) == 2  # offset 2: another producer's record
    assert _contiguous_from_zero([5, 6]) == 0  # the topic was not empty


@pytest.mark.integration
def test_after_a_replay_into_a_fresh_broker_the_archiver_starts_after_the_replayed_records(
        fresh_topic: Callable[[str], Topic], tmp_path: Path) -> None:
    from services.archiver.replay import ensure_replay_topics, replay_archive
    from streams.broker import LocalBroker
    from streams.producer import TypedProducer

    topic = fresh_topic("flywheel.tasks")
    store = ArchiveStore(tmp_path / "archive")
    store.write(to_table(new_rows([record_of(task(i), topic=topic.name, partition=i % 3,
                                             offset=i // 3) for i in range(30)], set()), 1))
    store.set_watermarks({(topic.name, 0): 999})  # stale, from the broker that is gone
    group = "archiver-after-replay"
    with LocalBroker.on_free_port(tmp_path / "fresh") as fresh:
        ensure_replay_topics(fresh.bootstrap, store)
        report = replay_archive(store, fresh.bootstrap, archiver_group=group)
        assert report.ends == {(topic.name, p): 10 for p in range(3)}
        assert store.watermark(topic.name, 0) == 10
        with TypedProducer(fresh.bootstrap) as producer:
            for i in range(30, 36):
                producer.send(topic, task(i))
        settings = ArchiverSettings(archive_dir=store.root, flush_interval_s=0.2,
                                    group_id=group, tracking_ids=1)
        archiver, source = build_archiver(fresh.bootstrap, settings, store.root,
                                          topics=[topic], data_dir=tmp_path)
        deadline = time.monotonic() + WAIT_S
        try:
            archiver.run(lambda: archiver.stats.archived_total >= 6
                         or time.monotonic() > deadline)
        finally:
            source.close()
    # Only the new events were read: the replayed ones were never re-read, so a one-id
    # table is enough, and the stale watermark did not hide the new ones.
    assert archiver.stats.polled == 6 and archiver.stats.duplicates == 0
    assert sorted(_ids(store)) == sorted(task(i).event_id for i in range(36))
