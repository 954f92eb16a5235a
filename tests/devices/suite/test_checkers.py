"""Checkers read state, not claims: partial credit, routing and delegation are told apart."""

from __future__ import annotations

import pytest

from devices.harness.harness import Harness
from devices.sim import SimPhone
from devices.suite import checkers as ck
from devices.suite.episode import score_state
from devices.suite.registry import get_template
from schemas.actions import Delegate, Finish, MemoryRead, ToolCall, UseSkill


@pytest.fixture()
def phone() -> Harness:
    return Harness(SimPhone())


def _start(phone: Harness, name: str, split: str = "train"):
    task = get_template(name).generate(split, 0, 0)
    phone.reset(task)
    return task, task.params


def test_values_match_normalises_case_numbers_and_list_order() -> None:
    assert ck.values_match("  Hello  World", "hello world")
    assert ck.values_match(12.5, 12.50) and ck.values_match(300, 300.0)
    assert ck.values_match(["fri", "mon"], ["mon", "fri"])
    assert not ck.values_match(True, 1)
    assert not ck.values_match("12", 13)


def test_args_match_needs_every_expected_argument() -> None:
    assert ck.args_match({"query": "Acme", "extra": 1}, {"query": "acme"})
    assert not ck.args_match({"query": "Acm"}, {"query": "acme"})
    assert not ck.args_match(None, {"query": "acme"})


def test_tool_call_checker_wants_the_exact_arguments(phone: Harness) -> None:
    task, p = _start(phone, "find_free_slot")
    phone.act(ToolCall(name="calendar.find_free_slot",
                       arguments={"date": p["date"], "duration_min": p["minutes"] + 5}))
    assert score_state(task, phone) == 0.0
    phone.act(ToolCall(name="calendar.find_free_slot",
                       arguments={"date": p["date"], "duration_min": p["minutes"]}))
    assert score_state(task, phone) == 1.0


def test_answer_without_looking_it_up_earns_half(phone: Harness) -> None:
    task, p = _start(phone, "contact_phone_lookup")
    phone.act(Finish(answer=f"It is {p['phone']}"))
    assert score_state(task, phone) == 0.5


def test_memory_answer_needs_the_value_not_a_claim(phone: Harness) -> None:
    task, _ = _start(phone, "recall_locker_code")
    phone.act(MemoryRead(key="gym_locker_code"))
    phone.act(Finish(answer="I found your locker code in memory."))
    assert score_state(task, phone) == 0.0


def test_skill_checker_gives_half_for_the_right_state_without_the_skill(phone: Harness) -> None:
    task, p = _start(phone, "skill_bedtime")
    for key, value in (("do_not_disturb", True), ("dark_mode", True),
                       ("brightness", int(p["level"]))):
        phone.act(ToolCall(name="settings.set", arguments={"key": key, "value": value}))
    phone.act(ToolCall(name="clock.set_alarm", arguments={"time": p["time"]}))
    assert score_state(task, phone) == 0.5


def test_skill_checker_rejects_the_wrong_skill_arguments(phone: Harness) -> None:
    task, p = _start(phone, "skill_bedtime")
    phone.act(UseSkill(skill="bedtime_mode", arguments={"wake_time": p["time"]}))
    # right skill, but brightness was left out: neither the routing nor the state is right
    assert score_state(task, phone) == 0.0


def test_collaboration_wants_the_named_sub_agent(phone: Harness) -> None:
    task, p = _start(phone, "team_quiet_evening")
    # the scheduler cannot change settings (permission denied), and main doing it is no delegation
    phone.act(Delegate(agent="scheduler", instruction="x", arguments={"tool_calls": [
        {"name": "settings.set", "arguments": {"key": "do_not_disturb", "value": True}}]}))
    phone.act(ToolCall(name="settings.set", arguments={"key": "do_not_disturb", "value": True}))
    phone.act(ToolCall(name="clock.set_alarm", arguments={"time": p["time"],
                                                          "label": p["label"]}))
    assert score_state(task, phone) == 0.5
    phone.act(Delegate(agent="device_admin", instruction="x", arguments={"tool_calls": [
        {"name": "settings.set", "arguments": {"key": "do_not_disturb", "value": True}}]}))
    assert score_state(task, phone) == 0.75


def test_final_state_checker_ignores_a_failed_call(phone: Harness) -> None:
    task, p = _start(phone, "add_to_cart")
    phone.act(ToolCall(name="shopping.add_to_cart",
                       arguments={"product_id": "pr_missing", "quantity": p["quantity"]}))
    assert phone.view().log[-1].ok is False
    assert score_state(task, phone) == 0.0


def test_numbers_in_answers_match_whole_tokens_in_either_format(phone: Harness) -> None:
    task, p = _start(phone, "product_price_lookup")
    phone.act(ToolCall(name="shopping.search", arguments={"query": p["product"]}))
    phone.act(Finish(answer=f"It costs 1{p['price']:.2f}"))  # a different, longer number
    assert score_state(task, phone) == 0.0
    phone.restore(phone.snapshot())
    task2, p2 = _start(phone, "product_price_lookup")
    phone.act(ToolCall(name="shopping.search", arguments={"query": p2["product"]}))
    phone.act(Finish(answer=f"It costs {p2['price']} dollars"))
    assert score_state(task2, phone) == 1.0
