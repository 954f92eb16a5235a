"""The rollout engine: events of one episode, final state in the blob store, timeouts."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from devices.blobs import BlobStore
from devices.sim import SimPhone
from schemas.actions import Finish
from services.rollout.engine import Rollout, episode_id_for
from services.rollout.policies import PolicyError, load_policy
from tests.services.dataflow.helpers import proposed, roll


def test_oracle_episode_names_policy_harness_and_stores_the_final_state(tmp_path: Path) -> None:
    task = proposed()
    started, ended = roll(task, tmp_path)
    assert started.episode_id == ended.episode_id == episode_id_for(task.task_id, "oracle",
                                                                    "default")
    assert ended.policy == "oracle" and ended.harness == "default"
    assert ended.outcome == "finished" and ended.steps
    assert all(step.latency_ms > 0 for step in ended.steps)
    assert ended.tool_calls == sum(s.tool_calls for s in ended.steps) >= 1
    final = json.loads(BlobStore(tmp_path).get(ended.final_state.sha256))
    assert set(final) >= {"tables", "settings", "memory", "log", "answer", "clock_ms"}
    assert ended.causation_id == started.event_id and started.causation_id == task.event_id


def test_rerunning_a_task_repeats_the_same_event_ids(tmp_path: Path) -> None:
    task = proposed(i=1)
    first, second = roll(task, tmp_path), roll(task, tmp_path)
    assert [e.event_id for e in first] == [e.event_id for e in second]


class StuckPolicy:
    name = "stuck"

    def begin(self, task, phone):  # type: ignore[no-untyped-def]
        return None

    def next_action(self, observation):  # type: ignore[no-untyped-def]
        time.sleep(3.0)
        return Finish()


def test_a_stuck_policy_ends_its_episode_as_timeout_instead_of_hanging(tmp_path: Path) -> None:
    rollout = Rollout(SimPhone(), StuckPolicy(), "stuck", BlobStore(tmp_path), call_timeout_s=0.2)
    began = time.monotonic()
    _, ended = rollout.run(proposed())
    rollout.close()
    assert time.monotonic() - began < 2.5
    assert ended.outcome == "timeout" and "longer than 0.2 s" in (ended.failure or "")
    assert ended.final_state is None


class BrokenPolicy:
    name = "broken"

    def begin(self, task, phone):  # type: ignore[no-untyped-def]
        return None

    def next_action(self, observation):  # type: ignore[no-untyped-def]
        raise KeyError("no such tool")


def test_a_policy_error_ends_the_episode_with_the_error(tmp_path: Path) -> None:
    rollout = Rollout(SimPhone(), BrokenPolicy(), "broken", BlobStore(tmp_path))
    _, ended = rollout.run(proposed())
    assert ended.outcome == "error" and "KeyError" in (ended.failure or "")


def test_policies_load_by_name_or_module_class() -> None:
    assert load_policy("oracle").name == "oracle"
    assert load_policy("devices.suite.policies:NoopPolicy").name == "noop"
    with pytest.raises(PolicyError, match="cannot load policy"):
        load_policy("devices.suite.policies:Nope")
    with pytest.raises(PolicyError, match="unknown policy"):
        load_policy("gpt")
