"""Batched episodes: many episodes decoded together score exactly as the one-at-a-time path."""

from __future__ import annotations

from pathlib import Path

import pytest

from devices.harness.answer import format_action
from devices.suite.instances import generate_split
from schemas.actions import ToolCall
from tests.trainer.conftest import tool_call_bias
from trainer.batched import run_batched
from trainer.evaluate import evaluate_policy
from trainer.policy import load_policy


def _tasks(count: int, max_steps: int) -> list:
    tasks = generate_split("dev", 1, 0)[:count]
    return [t.model_copy(update={"max_steps": max_steps + i % 2}) for i, t in enumerate(tasks)]


def _searching_policy(tiny_model: Path):
    policy = load_policy(tiny_model, max_new_tokens=48)
    call = format_action(ToolCall(name="contacts.search", arguments={"query": "Sofia"}))
    policy.model.generation_config.sequence_bias = tool_call_bias(policy.tokenizer, call)
    return policy


def test_batched_evaluation_matches_one_episode_at_a_time(tiny_model: Path) -> None:
    tasks = _tasks(5, 2)
    one = evaluate_policy(_searching_policy(tiny_model), tasks, progress=False)
    batched_policy = _searching_policy(tiny_model)
    many = evaluate_policy(batched_policy, tasks, progress=False, batch_size=3)  # slots are reused
    assert [r.task_id for r in many.records] == [t.task_id for t in tasks]
    assert many.records == one.records
    assert [r.steps for r in many.records] == [t.max_steps for t in tasks]  # valid calls every step
    assert batched_policy.stats.invalid == 0 and batched_policy.stats.steps == sum(t.max_steps for t in tasks)


def test_invalid_answers_end_their_own_episode_only(tiny_model: Path) -> None:
    policy = load_policy(tiny_model, max_new_tokens=8)  # an untrained model writes no action
    episodes = run_batched(policy, _tasks(4, 3), batch_size=4)
    assert [e.steps for e in episodes] == [1, 1, 1, 1]
    assert all(e.invalid == 1 and e.finished and e.score == 0.0 for e in episodes)
    assert policy.stats.invalid == 4 and len(policy.stats.prompt_tokens) == 4


def test_batch_size_must_be_positive(tiny_model: Path) -> None:
    with pytest.raises(ValueError, match="batch_size"):
        run_batched(load_policy(tiny_model), _tasks(1, 1), batch_size=0)


class _OneAtATime:
    """The same policy without `generate_batch`: the gate runner's one-by-one path."""

    def __init__(self, policy) -> None:
        self.policy, self.name = policy, policy.name

    def begin(self, goal, catalogue) -> None:
        self.policy.begin(goal, catalogue)

    def next_action(self, observation):
        return self.policy.next_action(observation)


def test_the_evolver_gate_runner_batches_a_model_policy_with_the_same_scores(tiny_model: Path) -> None:
    from devices.harness.spec import HarnessSpec
    from services.evolver.suite_runner import suite_runner

    spec = HarnessSpec.default().to_json_dict()
    names = ["star_relation", "text_relation", "new_number_relation"]
    batched = suite_runner(lambda: _searching_policy(tiny_model), templates=names, max_steps=2, batch_size=4)
    single = suite_runner(lambda: _OneAtATime(_searching_policy(tiny_model)), templates=names, max_steps=2)
    assert batched(spec, "dev") == single(spec, "dev")
    assert len(batched(spec, "dev")) == 2 * len(names)
