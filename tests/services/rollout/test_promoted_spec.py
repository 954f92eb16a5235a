"""Rollouts load the promoted harness: `run_rollout` on the real broker names the built-in
version before any promotion, the promoted version after one, and after a rollback repeats the
first episodes exactly (same seeds, same steps, same final states)."""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from devices.harness.spec import HarnessSpec, ToolPolicy
from schemas.episodes import EpisodeEnded, EpisodeStarted
from schemas.tasks import TaskProposed
from schemas.topics import TOPICS, Topic
from services.dataflow.registry import HarnessRegistry
from services.rollout.service import run_rollout
from services.rollout.settings import RolloutSettings
from streams.admin import create_topics
from streams.consumer import TypedBatchConsumer
from streams.producer import TypedProducer
from tests.services.dataflow.helpers import proposed

pytestmark = pytest.mark.integration

#: Only a guard against a hung test.
DEADLINE_S = 90.0


def _tasks() -> list[TaskProposed]:
    return [proposed(i=i, template=t) for t in range(3) for i in range(2)]


def _roll_out(bootstrap: str, data_dir: Path, tasks_topic: Topic, episodes: Topic,
              count: int) -> dict[str, tuple[EpisodeStarted, EpisodeEnded]]:
    """Runs the rollout service (one in-process sim, the seeded random policy) from the start
    of `tasks_topic` until `count` episodes are on `episodes`; task id -> its two events."""
    settings = RolloutSettings(policy="random", concurrency=1, group_id=f"r-{uuid.uuid4().hex[:8]}",
                               poll_timeout_ms=100)
    stop = threading.Event()
    service = threading.Thread(target=run_rollout, args=(settings, bootstrap, data_dir, stop),
                               kwargs={"tasks": tasks_topic, "episodes": episodes}, daemon=True)
    service.start()
    started: dict[str, EpisodeStarted] = {}
    ended: dict[str, EpisodeEnded] = {}
    reader = TypedBatchConsumer(bootstrap, [episodes], f"reader-{uuid.uuid4().hex[:8]}")
    try:
        deadline = time.monotonic() + DEADLINE_S
        while len(ended) < count and time.monotonic() < deadline:
            for record in reader.poll_batch(200):
                if isinstance(record.event, EpisodeStarted):
                    started[record.event.task_id] = record.event
                elif isinstance(record.event, EpisodeEnded):
                    ended[record.event.task_id] = record.event
    finally:
        reader.close()
        stop.set()
        service.join(30)
    assert len(ended) == count, f"only {len(ended)} of {count} episodes within {DEADLINE_S} s"
    return {task_id: (started[task_id], ended[task_id]) for task_id in ended}


def _behaviour(episode: EpisodeEnded) -> dict[str, Any]:
    """What a rollback must reproduce: every step (not its latency), the outcome, the final
    state's hash and the answer."""
    return {"steps": [s.model_dump(mode="json", exclude={"latency_ms"}) for s in episode.steps],
            "outcome": episode.outcome, "final_state": episode.final_state,
            "answer": episode.final_answer}


def test_rollouts_name_the_promoted_version_and_repeat_themselves_after_a_rollback(
        bootstrap: str, fresh_topic, tmp_path: Path) -> None:
    tasks = _tasks()
    # One partition: every run reads the tasks in the same order, and the random policy's
    # seed for an episode is (worker seed, episode number, goal).
    tasks_topic = dataclasses.replace(TOPICS["flywheel.tasks"].renamed(
        f"t-{uuid.uuid4().hex[:12]}"), partitions=1)
    create_topics(bootstrap, [tasks_topic], with_dlq=True)
    with TypedProducer(bootstrap, client_id="test-generator") as producer:
        for task in tasks:
            producer.send(tasks_topic, task)
    default = HarnessSpec.default()
    registry = HarnessRegistry.at_data_dir(tmp_path)
    assert registry.current() is None

    # Before any promotion: the built-in spec.
    before = _roll_out(bootstrap, tmp_path, tasks_topic, fresh_topic("flywheel.episodes"),
                       len(tasks))
    assert {s.harness for s, _ in before.values()} == {default.version}
    assert {e.harness for _, e in before.values()} == {default.version}

    # Promote a spec that hides a tool every task's catalogue shows: a behaviour change.
    hidden = sorted({step.action.name for _, e in before.values() for step in e.steps
                     if step.action.action_type == "tool_call"})[:1]
    assert hidden, "the random policy called at least one tool"
    promoted = default.model_copy(update={"tools": ToolPolicy(hidden=tuple(hidden)),
                                          "parent": default.version})
    registry.put(default.to_json_dict())  # the built-in spec is stored, so it can come back
    registry.promote(promoted.to_json_dict(), proposal_id="test-proposal")
    assert registry.current() == promoted.version != default.version

    after = _roll_out(bootstrap, tmp_path, tasks_topic, fresh_topic("flywheel.episodes"),
                      len(tasks))
    assert {s.harness for s, _ in after.values()} == {promoted.version}
    assert {e.harness for _, e in after.values()} == {promoted.version}
    assert not any(step.action.action_type == "tool_call" and step.action.name in hidden
                   for _, e in after.values() for step in e.steps), \
        "the promoted catalogue hides the tool from the policy"
    assert {e.episode_id for _, e in after.values()}.isdisjoint(
        {e.episode_id for _, e in before.values()})
    assert any(_behaviour(after[t][1]) != _behaviour(before[t][1]) for t in before)

    # Roll back to the built-in version: the same seeds give the same episodes.
    registry.rollback(default.version)
    again = _roll_out(bootstrap, tmp_path, tasks_topic, fresh_topic("flywheel.episodes"),
                      len(tasks))
    assert {e.harness for _, e in again.values()} == {default.version}
    for task_id, (_, ended) in before.items():
        assert again[task_id][1].event_id == ended.event_id
        assert _behaviour(again[task_id][1]) == _behaviour(ended)
