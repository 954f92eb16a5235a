"""The constrained answer's schema: every oracle action of the suite fits its episode's schema, and
an unknown tool, an invented key or another task's tool does not (checked by lm-format-enforcer's
own JSON-schema parser, character by character)."""

from __future__ import annotations

import json

import pytest

from devices.harness import Harness
from devices.harness.answer import action_to_call
from devices.sim import SimPhone
from devices.suite.instances import generate_split
from devices.suite.policies import OraclePolicy
from trainer.policy import ACTION_JSON_SCHEMA, answer_schema

lmfe = pytest.importorskip("lmformatenforcer")


def accepts(schema: dict, text: str) -> bool:
    parser = lmfe.JsonSchemaParser(schema)
    for char in text:
        if char not in parser.get_allowed_characters():
            return False
        parser = parser.add_character(char)
    return parser.can_end()


def _oracle_episodes(count: int) -> list[tuple[object, list[dict]]]:
    """(catalogue, the oracle's calls) for the first `count` dev tasks."""
    out = []
    harness = Harness(SimPhone())
    for task in generate_split("dev", 1, 0)[:count]:
        observation = harness.reset(task)
        oracle = OraclePolicy()
        oracle.prepare(task)
        oracle.begin(task.goal, harness.catalogue())
        calls = []
        while not observation.done and len(calls) < task.max_steps:
            action = oracle.next_action(observation)
            calls.append(action_to_call(action))
            observation = harness.act(action)
        out.append((harness.catalogue(), calls))
    return out


def test_every_oracle_answer_fits_its_episodes_schema() -> None:
    episodes = _oracle_episodes(40)
    checked = 0
    for catalogue, calls in episodes:
        schema = answer_schema(catalogue)
        for call in calls:
            assert accepts(schema, json.dumps(call, ensure_ascii=False)), call
            checked += 1
    assert checked > 100


def test_unknown_tools_invented_keys_and_other_tasks_tools_are_refused() -> None:
    (catalogue, calls), *rest = _oracle_episodes(20)
    other = next(c for c, _ in rest if set(c.tool_names) - set(catalogue.tool_names))
    schema = answer_schema(catalogue)
    tool_call = next(c for c in calls if c["name"] == "tool_call")
    assert accepts(schema, json.dumps(tool_call))
    unknown = {"name": "tool_call", "arguments": {"name": "bank.wire_everything", "arguments": {}}}
    assert not accepts(schema, json.dumps(unknown))
    extra = {"name": tool_call["name"], "arguments": {**tool_call["arguments"], "note": "x"}}
    assert not accepts(schema, json.dumps(extra))
    assert not accepts(schema, json.dumps({"name": "finish", "arguments": {"answer": "ok", "why": "done"}}))
    assert not accepts(schema, json.dumps({"name": "teleport", "arguments": {}}))
    foreign = sorted(set(other.tool_names) - set(catalogue.tool_names))
    assert not accepts(schema, json.dumps({"name": "tool_call", "arguments": {"name": foreign[0], "arguments": {}}}))
    # without a catalogue only the action's name is checked
    assert accepts(ACTION_JSON_SCHEMA, json.dumps(unknown))
