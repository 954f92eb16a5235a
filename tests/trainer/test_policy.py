"""ModelPolicy: plays suite episodes from a local model; invalid output ends the episode as its own category."""

from __future__ import annotations

from pathlib import Path

from devices.harness import Harness
from devices.harness.answer import format_action
from devices.sim import SimPhone
from devices.suite.episode import run_episode
from devices.suite.instances import generate_split
from schemas.actions import ToolCall
from tests.trainer.conftest import tool_call_bias
from trainer.policy import load_policy


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


def test_the_policy_prompts_with_the_harness_context(tiny_model: Path) -> None:
    policy = load_policy(tiny_model)
    task = _task("star_relation")
    harness = Harness(SimPhone())
    observation = harness.reset(task)
    policy.begin(task.goal, harness.catalogue())
    assert policy.prompt_messages(observation) == harness.context_messages()
    assert policy.context_header == harness.context_header()
    assert policy.context_header.startswith(f"Goal: {task.goal}\nNow: ")


def _prefill_lengths(policy) -> list[int]:
    """Records the token count of every forward pass of `policy`'s model (prefills are the long ones)."""
    seen: list[int] = []
    policy.model.register_forward_pre_hook(lambda module, args, kwargs: seen.append(kwargs["input_ids"].shape[1])
                                           if kwargs.get("input_ids") is not None else None, with_kwargs=True)
    return seen


def test_prefix_cache_prefills_only_the_new_tokens_and_answers_the_same(tiny_model: Path) -> None:
    call = format_action(ToolCall(name="contacts.search", arguments={"query": "Sofia"}))
    task = _task("star_relation").model_copy(update={"max_steps": 3})
    runs = {}
    for cached in (True, False):
        policy = load_policy(tiny_model, max_new_tokens=64, prefix_cache=cached)
        policy.model.generation_config.sequence_bias = tool_call_bias(policy.tokenizer, call)
        forwards = _prefill_lengths(policy)
        result = run_episode(Harness(SimPhone()), task, policy)
        prefills = [n for n in forwards if n > 1]
        runs[cached] = (result.score, result.steps, list(policy.stats.output_tokens), prefills,
                        list(policy.stats.prompt_tokens))
    (score, steps, outputs, prefills, prompts), uncached = runs[True], runs[False]
    assert (score, steps, outputs) == uncached[:3]  # the same answers, token for token
    assert uncached[3] == prompts  # without the cache every step prefills its whole prompt
    assert prefills[0] == prompts[0]
    for step in (1, 2):  # with it, a later step prefills only what follows the previous step's tokens
        assert 0 < prefills[step] <= prompts[step] - prompts[step - 1]


def test_prefix_cache_starts_fresh_for_a_new_episode(tiny_model: Path) -> None:
    policy = load_policy(tiny_model, max_new_tokens=8)
    forwards = _prefill_lengths(policy)
    prefills = []
    for name in ("star_relation", "star_relation"):
        harness = Harness(SimPhone())
        observation = harness.reset(_task(name))
        policy.begin(_task(name).goal, harness.catalogue())
        forwards.clear()
        policy.next_action(observation)
        prefills.append(forwards[0])  # the episode's first pass (later ones decode)
    assert prefills == policy.stats.prompt_tokens  # `begin` dropped the first episode's cache
