"""The four flywheel services as real processes (faust agents + the rollout) on a real
broker: a kill -9 of every service mid-run, a restart, and nothing lost or duplicated."""

from __future__ import annotations

import os
import signal
import time
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from schemas.topics import TOPICS
from services.cli.loop_run import SERVICES, DataLoop
from services.curator.dedupe import NEAR_THRESHOLD, exact_signature, jaccard, tokens
from streams.admin import create_topics
from streams.broker import LocalBroker
from streams.consumer import TypedBatchConsumer

pytestmark = pytest.mark.integration

#: Guards against hangs only; not a speed assertion.
WAIT_S = 240.0
TASKS = 60
EXAMPLES = 60


def wait_for(condition, loop: DataLoop, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}: {loop.status()}"
        time.sleep(0.2)


def read_all(bootstrap: str) -> list:  # type: ignore[type-arg]
    names = ("flywheel.tasks", "flywheel.episodes", "flywheel.verdicts", "flywheel.failures",
             "flywheel.reviews", "flywheel.datasets")
    with TypedBatchConsumer(bootstrap, [TOPICS[n] for n in names], "test-read-all") as consumer:
        return [r.event for batch in consumer.iter_batches(500, commit=False,
                                                           stop_after_idle_polls=20)
                for r in batch]


def test_kill_9_of_every_service_mid_run_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    with LocalBroker.on_free_port(tmp_path / "broker") as broker:
        bootstrap = broker.bootstrap
        create_topics(bootstrap, TOPICS.values())
        loop = DataLoop(bootstrap, tmp_path / "var", EXAMPLES,
                        env={"FLYWHEEL_GENERATOR_MAX_TASKS": str(TASKS),
                             "FLYWHEEL_GENERATOR_QUEUE_DEPTH": "8"})
        with loop:
            wait_for(lambda: loop.progress.verdicts >= 10, loop, "the first verdicts")
            assert loop.progress.verdicts < TASKS  # the kill lands mid-run
            for name in SERVICES:
                os.kill(loop.pid(name), signal.SIGKILL)
            for name in SERVICES:
                loop._procs[name].wait(10)
                loop.spawn(name)
            wait_for(lambda: loop.done, loop, "the snapshot")
            wait_for(lambda: loop.progress.verdicts >= TASKS, loop, "every task's verdict")
            time.sleep(2.0)  # the last reviews settle
        assert not loop.died, loop.died
        events = read_all(bootstrap)

    by_type = defaultdict(dict)
    for event in events:
        by_type[event.type][event.event_id] = event  # redelivered copies share an event id
    tasks = by_type["task.proposed"]
    ended = by_type["episode.ended"]
    verdicts = by_type["verdict.issued"]
    # Nothing duplicated: one task per id, one episode per task, one verdict per episode …
    assert len({t.task_id for t in tasks.values()}) == len(tasks) == TASKS
    assert len({e.task_id for e in ended.values()}) == len(ended) == TASKS
    assert len({v.episode_id for v in verdicts.values()}) == len(verdicts) == TASKS
    # … nothing lost: every task ran and every episode was judged …
    assert {e.task_id for e in ended.values()} == {t.task_id for t in tasks.values()}
    assert {v.episode_id for v in verdicts.values()} == {e.episode_id for e in ended.values()}
    # … and every passing episode reached the curator (a review, or a counted drop).
    requested = {i for r in by_type["review.requested"].values() for i in r.subject_ids}
    assert len(requested) == sum(len(r.subject_ids) for r in by_type["review.requested"].values())
    snapshots = list(by_type["dataset.snapshotted"].values())
    assert snapshots and snapshots[0].rows >= EXAMPLES
    snap = snapshots[0]
    assert len({d.review_id for d in by_type["review.decided"].values()}) == \
        len(by_type["review.decided"])
    passed = {v.episode_id for v in verdicts.values() if v.passed and not v.environment_fault}
    assert requested <= passed
    by_id = ended_by_id(ended)
    template = {t.task_id: t.template for t in tasks.values()}
    for episode_id in passed - requested:  # not reviewed: only as a duplicate of one that was
        mine = by_id[episode_id]
        twins = [r for r in requested if template[by_id[r].task_id] == template[mine.task_id]
                 and (exact_signature(template[mine.task_id], by_id[r].steps)
                      == exact_signature(template[mine.task_id], mine.steps)
                      or jaccard(tokens(by_id[r].steps), tokens(mine.steps)) >= NEAR_THRESHOLD)]
        assert twins, f"passing episode {episode_id} was neither reviewed nor a duplicate"
    rows = pq.read_table(Path(snap.path) / "data.parquet").to_pylist()
    assert len({r["example_id"] for r in rows}) == len(rows) == snap.rows
    per_episode = defaultdict(list)
    for row in rows:
        per_episode[row["episode_id"]].append(row["step_index"])
    for episode_id, indexes in per_episode.items():
        assert sorted(indexes) == list(range(len(ended_by_id(ended)[episode_id].steps)))
    assert set(per_episode) <= requested
    assert {r["split"] for r in rows} == {"train"}


def ended_by_id(ended: dict) -> dict:  # type: ignore[type-arg]
    return {e.episode_id: e for e in ended.values()}
