"""The Parquet archive: layout, atomic writes, tracking keys, replay order, stats."""

from __future__ import annotations

import os
import time
from pathlib import Path

from services.archiver.rows import new_rows, to_table
from services.archiver.store import ArchiveStore
from tests.services.archiver.helpers import Rec, record_of, task


def _write(store: ArchiveStore, records: list[Rec], at: int = 1) -> list[Path]:
    return store.write(to_table(new_rows(records, set()), at))


def test_write_splits_by_topic_and_date(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path)
    paths = _write(store, [record_of(task(1, day=1)), record_of(task(2, day=2), offset=1),
                           Rec("flywheel.tasks.dlq", 0, 0, None, b"x",
                               timestamp_ms=1_717_243_200_000)])  # 2024-06-01 UTC
    folders = sorted(str(p.parent.relative_to(tmp_path)) for p in paths)
    assert folders == ["topic=flywheel.tasks.dlq/date=2024-06-01",
                       "topic=flywheel.tasks/date=2024-05-01",
                       "topic=flywheel.tasks/date=2024-05-02"]
    assert store.topics() == ["flywheel.tasks", "flywheel.tasks.dlq"]
    assert store.event_ids() >= {"ev00000001", "ev00000002"}
    assert len(store.event_ids()) == 3


def test_unfinished_writes_are_invisible_and_cleaned(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path)
    _write(store, [record_of(task(1))])
    leftover = tmp_path / "topic=flywheel.tasks" / "date=2024-05-01" / ".part-x.parquet.tmp"
    leftover.write_bytes(b"half a file")
    hour_ago = time.time() - 3601
    os.utime(leftover, (hour_ago, hour_ago))
    assert len(store.files()) == 1
    assert store.clean_tmp() == 1 and not leftover.exists()


def test_a_write_in_progress_by_another_member_is_not_cleaned(tmp_path: Path) -> None:
    """A second member starting on a shared archive must not remove the first one's .tmp
    before its rename (that write then failed and the first member crashed)."""
    store = ArchiveStore(tmp_path)
    folder = tmp_path / "topic=flywheel.tasks" / "date=2024-05-01"
    folder.mkdir(parents=True)
    in_progress = folder / ".part-y.parquet.tmp"
    in_progress.write_bytes(b"being written")
    assert ArchiveStore(tmp_path).clean_tmp() == 0 and in_progress.exists()
    os.replace(in_progress, folder / "part-y.parquet")  # the first member's rename succeeds
    assert store.clean_tmp(older_than_s=0) == 0


def test_replay_order_is_partition_then_offset(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path)
    _write(store, [record_of(task(1), partition=1, offset=5), record_of(task(2), offset=9)])
    _write(store, [record_of(task(3), partition=1, offset=0), record_of(task(4), offset=2)])
    table = store.read_for_replay("flywheel.tasks")
    assert table["event_id"].to_pylist() == ["ev00000004", "ev00000002", "ev00000003",
                                             "ev00000001"]


def test_stats_count_rows_and_files(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path)
    _write(store, [record_of(task(i), offset=i) for i in range(5)])
    _write(store, [record_of(task(i), offset=i) for i in range(5, 8)])
    [stats] = store.stats()
    assert (stats.topic, stats.files, stats.rows) == ("flywheel.tasks", 2, 8)
    assert stats.bytes > 0


def test_missing_archive_is_one_sentence(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path / "nowhere")
    try:
        store.require()
    except FileNotFoundError as error:
        assert "no event archive at" in str(error) and "\n" not in str(error)
    else:
        raise AssertionError("require() accepted a missing archive")
