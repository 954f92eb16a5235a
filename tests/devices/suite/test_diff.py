"""Whole-state-diff checking: exact change passes; over-acting, spraying and wrong tries score 0."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from devices.sim.state import SimState
from devices.suite.diff import (
    Add,
    Allow,
    AnswerIs,
    Called,
    Delegated,
    MemoryWritten,
    Remove,
    Setting,
    SkillUsed,
    Update,
    answer_equals,
    check_change,
)
from devices.suite.state_view import FinalStateError, StateView


def _state() -> dict[str, Any]:
    s = SimState()
    s.load({"contacts": {"contacts": [
        {"id": "c1", "name": "Ana Ruiz", "phone": "1", "starred": False},
        {"id": "c2", "name": "Ana Beck", "phone": "2", "starred": False}]},
        "clock": {"alarms": [{"id": "a1", "time": "07:00", "label": "Gym", "enabled": True}]}})
    return s.to_final_json()


def _log(kind: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"step": 1, "kind": kind, "name": name, "arguments": arguments, "ok": True,
            "agent": "main", "parent": None}


def _check(after: dict[str, Any], expected: list[Any], **kw: Any) -> Any:
    return check_change(StateView.from_json(_state()), StateView.from_json(after), expected, **kw)


def test_exact_update_passes_and_an_extra_field_or_row_fails() -> None:
    expected = [Update("contacts", "contacts", "c1", {"starred": True})]
    good = _state()
    good["tables"]["contacts"]["contacts"]["c1"]["starred"] = True
    assert _check(good, expected).score == 1.0
    renamed = copy.deepcopy(good)
    renamed["tables"]["contacts"]["contacts"]["c1"]["name"] = "Other"
    assert _check(renamed, expected).score == 0.0
    sprayed = copy.deepcopy(good)  # star every Ana: the spraying solution
    sprayed["tables"]["contacts"]["contacts"]["c2"]["starred"] = True
    result = _check(sprayed, expected)
    assert result.score == 0.0 and result.progress == 1.0
    assert result.violations == ["extra write: contacts.contacts row c2 changed (starred)"]


def test_remove_is_not_passed_by_renaming_or_disabling() -> None:
    expected = [Remove("clock", "alarms", "a1")]
    renamed = _state()
    renamed["tables"]["clock"]["alarms"]["a1"]["label"] = "deleted"
    assert _check(renamed, expected).score == 0.0
    gone = _state()
    del gone["tables"]["clock"]["alarms"]["a1"]
    assert _check(gone, expected).score == 1.0


def test_add_needs_exactly_one_matching_row_and_nothing_else() -> None:
    expected = [Add("messages", "messages", {"phone": "1", "body": ("~", "late")})]
    one = _state()
    one["tables"]["messages"]["messages"]["m1"] = {"id": "m1", "phone": "1", "body": "Running late"}
    assert _check(one, expected).score == 1.0
    to_all = copy.deepcopy(one)  # texting everyone
    to_all["tables"]["messages"]["messages"]["m2"] = {"id": "m2", "phone": "2", "body": "Running late"}
    assert _check(to_all, expected).score == 0.0
    twice = copy.deepcopy(one)
    twice["tables"]["messages"]["messages"]["m3"] = {"id": "m3", "phone": "1", "body": "late"}
    assert _check(twice, expected).score == 0.0


def test_settings_and_side_effects() -> None:
    expected = [Setting("bluetooth", True), Allow("clock", "alarms", fields=("enabled",))]
    after = _state()
    after["settings"]["bluetooth"] = True
    after["tables"]["clock"]["alarms"]["a1"]["enabled"] = False
    assert _check(after, expected).score == 1.0
    after["settings"]["wifi"] = False  # an unrelated setting
    assert _check(after, expected).violations == ["extra write: setting wifi"]


@pytest.mark.parametrize(("answer", "expected", "ok"), [
    ("12.50", 12.5, True), ("$12.5", 12.5, True), ("12.5.", 12.5, True), ("0 1 2 12.5", 12.5, False),
    ("3", 13, False), ("Priya Raman.", "priya raman", True), ("Priya Raman, Tomasz Kowal", "Priya Raman", False),
    (None, "x", False), ("Priya", ("Priya Raman", "Priya"), True), ("7:45", "07:45", True),
    ("7:45 or 8:45", "07:45", False), ("17:45", "07:45", False),
])
def test_answers_must_equal_after_normalisation(answer: Any, expected: Any, ok: bool) -> None:
    assert answer_equals(answer, expected) is ok


def test_answer_spray_scores_zero_with_progress() -> None:
    after = _state()
    after["answer"] = "1 2 3 4 5 6 7"
    result = _check(after, [AnswerIs(4)])
    assert result.score == 0.0 and result.progress == 0.0


def test_skill_credit_follows_the_choice_and_wrong_tries_cost() -> None:
    expected = [SkillUsed("morning_routine", {"time": "07:00"})]
    right = _state()
    right["log"] = [_log("skill", "morning_routine", time="07:00")]
    assert _check(right, expected).score == 1.0
    spray = copy.deepcopy(right)  # try every skill
    spray["log"].insert(0, _log("skill", "evening_routine", time="07:00"))
    result = _check(spray, expected)
    assert result.score == 0.0 and result.violations == ["wrong skill tried: evening_routine"]


def test_delegation_credit_needs_the_agent_and_its_context_and_no_other() -> None:
    expected = [Delegated("travel_agent", context=("Lisbon",))]
    right = _state()
    right["log"] = [_log("delegate", "travel_agent", instruction="book Lisbon")]
    assert _check(right, expected).score == 1.0
    vague = _state()
    vague["log"] = [_log("delegate", "travel_agent", instruction="book it")]
    assert _check(vague, expected).score == 0.0
    everyone = copy.deepcopy(right)
    everyone["log"].append(_log("delegate", "shopper", instruction="book Lisbon"))
    assert _check(everyone, expected).score == 0.0


def test_memory_writes_count_only_when_asked_and_must_be_the_expected_one() -> None:
    after = _state()
    after["memory"] = {"locker": "code 4821", "junk": "x"}
    assert _check(after, [MemoryWritten(("4821",))], memory=True).score == 0.0
    del after["memory"]["junk"]
    assert _check(after, [MemoryWritten(("4821",))], memory=True).score == 1.0
    assert _check(after, [], memory=False).score == 1.0


def test_called_reads_the_log_of_this_episode() -> None:
    after = _state()
    after["log"] = [_log("tool_call", "weather.forecast", city="Oslo")]
    assert _check(after, [Called("weather.forecast", {"city": "oslo"})]).score == 1.0
    assert _check(after, [Called("weather.forecast", {"city": "Bergen"})]).score == 0.0


def test_bad_final_state_is_one_sentence() -> None:
    with pytest.raises(FinalStateError, match="tables"):
        StateView.from_json({"tables": []})
    with pytest.raises(FinalStateError, match="log entry"):
        StateView.from_json({"log": [{"kind": "x"}]})


def test_view_round_trips_the_sim_state() -> None:
    data = _state()
    view = StateView.from_json(data)
    assert view.to_json() == data
    assert view.row("contacts", "contacts", "c1")["name"] == "Ana Ruiz"
    assert view.rows("nope", "nothing") == []
