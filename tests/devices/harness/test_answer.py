"""The planner's answer format: round trips, one shape for every answer, trailing text ignored,
invalid output as its own category."""

from __future__ import annotations

import pytest

from devices.harness.answer import InvalidAction, format_action, parse_completion
from schemas.actions import Delegate, Finish, InputText, MemoryRead, MemoryWrite, ToolCall, UseSkill


@pytest.mark.parametrize("action", [
    ToolCall(name="contacts.search", arguments={"query": "Sofia"}),
    MemoryRead(key="dentist"),
    Finish(answer="+1-555-0100"),
    Finish(),
    MemoryWrite(key="previous_home_address", value=None),  # a required None must survive
    InputText(text="hi", index=2, clear=False),
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


@pytest.mark.parametrize("action", [
    ToolCall(name="shopping.list_orders"),
    UseSkill(skill="travel_mode"),
    Delegate(agent="shopper", instruction="order it"),
])
def test_empty_arguments_are_always_written(action) -> None:
    text = format_action(action)
    assert '"arguments": {}' in text
    assert text.endswith('{}}}\n</tool_call>')
    assert parse_completion(text) == action


def test_tool_calls_end_alike_with_and_without_arguments() -> None:
    bare = format_action(ToolCall(name="shopping.list_orders"))
    full = format_action(ToolCall(name="contacts.search", arguments={"query": "Ann"}))
    assert bare.rsplit('"', 1)[1] .count("}") == full.rsplit('"', 1)[1].count("}")


@pytest.mark.parametrize("tail", ["}", "}}\n</tool_call>", " and then I will finish.", "\n<tool_call>garbage"])
def test_trailing_text_after_the_first_json_value_is_ignored(tail: str) -> None:
    action = ToolCall(name="contacts.search", arguments={"query": "Ann"})
    text = format_action(action).removesuffix("\n</tool_call>") + tail
    assert parse_completion(text) == action


def test_an_unclosed_answer_is_still_invalid() -> None:
    text = '<tool_call>\n{"name": "tool_call", "arguments": {"name": "contacts.search", "arguments": {"query": "A'
    result = parse_completion(text)
    assert isinstance(result, InvalidAction) and result.reason.startswith("malformed JSON")
