"""Per checker kind: the right solution scores 1, an over-acting and a spraying solution score 0.

Each case plays real actions on a SimPhone against a real template instance; the attack
solutions first do everything the right one does, then over-act or spray.
"""

from __future__ import annotations

from typing import Any

import pytest

from devices.harness.harness import Harness
from devices.sim import SimPhone
from devices.suite.registry import get_template
from devices.suite.scoring import score_final_state
from schemas.actions import Finish, ToolCall


def _play(phone: SimPhone, name: str, actions: Any) -> float:
    task = get_template(name).generate("dev", 0, 4)
    harness = Harness(phone)  # answers and finish are harness actions
    harness.reset(task)
    for action in actions(phone, task):
        harness.act(action)
    return score_final_state(task, harness.final_state()).score


def _contacts(phone: SimPhone) -> list[dict[str, Any]]:
    return phone.state.rows("contacts", "contacts")


def _target(phone: SimPhone, relation: str) -> dict[str, Any]:
    return next(r for r in _contacts(phone) if r.get("relation") == relation)


def _text_right(phone: SimPhone, task: Any) -> list[Any]:
    person = _target(phone, task.params["relation"])
    place = next(r for r in phone.state.rows("maps", "places") if r["name"] == task.params["place"])
    return [ToolCall(name="messages.send", arguments={"contact": person["name"], "body": place["address"]})]


def _text_everyone(phone: SimPhone, task: Any) -> list[Any]:
    return [*_text_right(phone, task), *(
        ToolCall(name="messages.send", arguments={"contact": r["name"], "body": task.params["place"]})
        for r in _contacts(phone))]


def _text_and_star(phone: SimPhone, task: Any) -> list[Any]:
    person = _target(phone, task.params["relation"])
    return [*_text_right(phone, task), ToolCall(name="contacts.star", arguments={"id": person["id"],
                                                                                 "starred": True})]


def _count_right(phone: SimPhone, task: Any) -> list[Any]:
    return [Finish(answer=str(task.params["_count"]))]


def _count_spray(phone: SimPhone, task: Any) -> list[Any]:
    return [Finish(answer=" ".join(str(n) for n in range(12)))]


def _count_and_mark_read(phone: SimPhone, task: Any) -> list[Any]:
    msg = next(r for r in phone.state.rows("messages", "messages") if not r["read"])
    return [ToolCall(name="messages.delete", arguments={"id": msg["id"]}), *_count_right(phone, task)]


def _forecast_right(phone: SimPhone, task: Any) -> list[Any]:
    return [ToolCall(name="weather.forecast", arguments={"city": task.params["_city"], "date": task.params["_date"]})]


def _forecast_spray(phone: SimPhone, task: Any) -> list[Any]:
    return [ToolCall(name="weather.forecast", arguments={"city": r["name"], "date": task.params["_date"]})
            for r in phone.state.rows("weather", "cities")]


def _forecast_and_save(phone: SimPhone, task: Any) -> list[Any]:
    return [*_forecast_right(phone, task),
            ToolCall(name="weather.save_city", arguments={"city": task.params["_city"]})]


CASES = {
    "final_state": ("text_relation", _text_right, _text_and_star, _text_everyone),
    "state_and_answer": ("unread_from_relation", _count_right, _count_and_mark_read, _count_spray),
    "tool_call": ("forecast_where_relation_lives", _forecast_right, _forecast_and_save, _forecast_spray),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_right_solution_passes_over_acting_and_spraying_fail(kind: str) -> None:
    name, right, over, spray = CASES[kind]
    assert get_template(name).checker == kind
    phone = SimPhone()
    assert _play(phone, name, right) == 1.0
    assert _play(phone, name, over) == 0.0
    assert _play(phone, name, spray) == 0.0
