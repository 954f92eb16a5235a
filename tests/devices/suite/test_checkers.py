"""Checkers read state, not claims: partial credit, routing and delegation are told apart."""

from __future__ import annotations

import pytest

from devices.harness.harness import Harness
from devices.sim import SimPhone
from devices.suite import checkers as ck
from devices.suite.episode import score_state
from devices.suite.registry import get_template
from schemas.actions import Finish, ToolCall


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
