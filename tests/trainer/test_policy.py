"""ModelPolicy: plays suite episodes from a local model; invalid output ends the episode as its own category."""

from __future__ import annotations

from pathlib import Path

from devices.harness import Harness
from devices.sim import SimPhone
from devices.suite.episode import run_episode
from devices.suite.instances import generate_split
from schemas.actions import ToolCall
from tests.trainer.conftest import tool_call_bias
from trainer.policy import load_policy
from trainer.prompt import format_action


def _task(name: str):
    return next(t for t in generate_split("dev", 1, 0) if t.template == name)


def test_untrained_model_output_is_counted_invalid_and_finishes(tiny_model: Path) -> None:
    policy = load_policy(tiny_model, max_new_tokens=12)
    result = run_episode(SimPhone(), _task("star_relation"), policy)
    assert result.steps == 1 and result.finished and result.score == 0.0
    assert policy.stats.invalid == 1 and policy.stats.validity == 0.0
    assert policy.last_invalid is not None and policy.stats.prompt_tokens[0] < 1000


def test_valid_actions_reach_the_phone_and_are_scored(tiny_model: Path) -> None:
    policy = load_policy(tiny_model, max_new_tokens=64)
    call = format_action(ToolCall(name="contacts.search", arguments={"query": "Sofia"}))
    policy.model.generation_config.sequence_bias = tool_call_bias(policy.tokenizer, call)
    task = _task("star_relation").model_copy(update={"max_steps": 3})
    harness = Harness(SimPhone())
    result = run_episode(harness, task, policy)
    assert policy.stats.invalid == 0 and result.steps == 3
    searches = [e for e in harness.final_state()["log"] if e["name"] == "contacts.search"]
    assert len(searches) == 3 and searches[0]["arguments"] == {"query": "Sofia"}


def test_constrained_decoding_keeps_a_prose_loving_model_inside_action_json(tiny_model: Path) -> None:
    task = _task("star_relation")
    texts = {}
    for constrained in (False, True):
        policy = load_policy(tiny_model, max_new_tokens=16, constrained=constrained)
        policy.model.generation_config.sequence_bias = tool_call_bias(policy.tokenizer, "Sofia is at home")
        harness = Harness(SimPhone())
        observation = harness.reset(task)
        policy.begin(task.goal, harness.catalogue())
        policy.next_action(observation)
        assert policy.last_invalid is not None  # 16 tokens cannot finish an action either way
        texts[constrained] = policy.last_invalid.text
    assert texts[False].startswith("Sofia is at home")
    body = texts[True].removeprefix("<tool_call>\n")
    assert body.lstrip().startswith("{") and "Sofia" not in body


def test_harness_context_mode_prompts_with_the_harness_rendering(tiny_model: Path) -> None:
    policy = load_policy(tiny_model, context="harness")
    task = _task("star_relation")
    harness = Harness(SimPhone())
    observation = harness.reset(task)
    policy.begin(task.goal, harness.catalogue())
    assert policy.prompt_messages(observation) == [{"role": "user", "content": harness.context()}]
    planner = load_policy(tiny_model)
    planner.begin(task.goal, harness.catalogue())
    assert planner.prompt_messages(observation)[0]["content"].startswith(f"Goal: {task.goal}")
