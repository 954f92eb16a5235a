"""The planner's answer format and context: round trips, invalid output as its own category, compact prompts."""

from __future__ import annotations

import pytest

from devices.sim import SimPhone
from devices.suite.instances import generate_split
from schemas.actions import Finish, MemoryRead, ToolCall
from trainer.prompt import (
    InvalidAction,
    catalogue_for_task,
    format_action,
    parse_completion,
    render_context,
    render_observation,
)


@pytest.mark.parametrize("action", [
    ToolCall(name="contacts.search", arguments={"query": "Sofia"}),
    MemoryRead(key="dentist"),
    Finish(answer="+1-555-0100"),
    Finish(),
])
def test_format_then_parse_round_trips(action) -> None:
    assert parse_completion(format_action(action) + "<|im_end|>") == action


def test_bare_androidworld_json_is_accepted() -> None:
    assert parse_completion('{"action_type": "open_app", "app_name": "maps"}').app_name == "maps"


@pytest.mark.parametrize(("text", "reason"), [
    ("Sofia's number is 555.", "no action JSON"),
    ('<tool_call>\n{"name": "tool_call", "arguments": {"name": \n</tool_call>', "malformed JSON"),
    ('<tool_call>\n{"name": "self_destruct", "arguments": {}}\n</tool_call>', "not a valid action"),
    ('<tool_call>\n{"name": "click", "arguments": {}}\n</tool_call>', "not a valid action"),
    ('<tool_call>\n{"name": ["tool_call"], "arguments": 3}\n</tool_call>', "not a valid action"),
    ('{"action_type": "memory_read", "key": "a", "query": "b"}', "not a valid action"),
])
def test_invalid_output_is_a_category_not_a_crash(text: str, reason: str) -> None:
    result = parse_completion(text)
    assert isinstance(result, InvalidAction) and result.reason.startswith(reason)


def test_catalogue_shows_only_the_tasks_apps() -> None:
    phone = SimPhone()
    task = next(t for t in generate_split("dev", 1, 0) if t.template == "contact_phone_lookup")
    tools = catalogue_for_task(task, phone).tools
    assert tools and {t.app for t in tools} == {"contacts"}
    assert len(tools) < len(phone.tools) / 4


def test_context_names_goal_tools_and_first_view() -> None:
    phone = SimPhone()
    task = generate_split("dev", 1, 0)[0]
    observation = phone.reset(task)
    context = render_context(task.goal, catalogue_for_task(task, phone), observation=observation)
    assert context.startswith(f"Goal: {task.goal}")
    assert "contacts.search(query)" in context and "Screen: home:" in context
    assert task.params and all(str(v) not in context for k, v in task.params.items() if k == "expected")


def test_observation_is_cut_to_keep_prompts_small() -> None:
    from schemas.observations import Observation, ToolResult

    big = Observation(step=1, clock_ms=0, result=ToolResult(name="x", ok=True, value=["y" * 50] * 100))
    assert len(render_observation(big)) < 450
