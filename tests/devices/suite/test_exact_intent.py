"""Checkers judge intent exactly: each exploit an attacker used to score without planning is
planted here and must score 0 (or, for guessing, no better than chance over instances)."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Any

import pytest

from devices.harness import Harness
from devices.harness.episode import play
from devices.sim import SimPhone
from devices.suite.registry import get_template
from devices.suite.scoring import score_final_state
from devices.suite.templates.memory import ForgetOldAddress
from schemas.actions import Finish, MemoryWrite, ToolCall

N = 24  # instances per guessing measurement


class Planted:
    """Plays a fixed list of actions, then finishes (with `answer`)."""

    name = "planted"

    def __init__(self, actions: Sequence[Any], answer: Any = None) -> None:
        self.actions, self.answer = list(actions), answer

    def begin(self, goal: str, catalogue: Any) -> None:
        self._left = list(self.actions)

    def next_action(self, observation: Any) -> Any:
        return self._left.pop(0) if self._left else Finish(answer=self.answer)


def _score(template: str, i: int, actions: Sequence[Any], answer: Any = None, split: str | None = None) -> float:
    t = get_template(template)
    task = t.generate(split or t.splits()[-1], i, 0)  # type: ignore[arg-type]
    played = play(Harness(SimPhone()), task, Planted(actions, answer))
    return score_final_state(task, played.harness.final_state()).score


def _params(template: str, i: int) -> dict[str, Any]:
    t = get_template(template)
    return dict(t.generate(t.splits()[-1], i, 0).params)  # type: ignore[arg-type]


@pytest.mark.parametrize("template", ["umbrella_reminder", "umbrella_for_visit"])
def test_a_reminder_naming_both_branches_of_the_condition_fails(template: str) -> None:
    for i in range(4):
        due = _params(template, i)["_due"]
        both = ToolCall(name="reminders.create", arguments={"title": "Take umbrella or sunglasses", "due": due})
        assert _score(template, i, [both]) == 0.0


def test_a_memory_dump_of_every_message_is_not_the_code() -> None:
    for i in range(4):
        p = _params("mem_save_code_from_text", i)
        dump = f"old {p['old']}; new {p['code']}; other {p['other']}"
        assert _score("mem_save_code_from_text", i, [MemoryWrite(key="codes", value=dump)]) == 0.0


def test_a_memory_entry_naming_every_sender_is_not_the_sender() -> None:
    for i in range(4):
        p = _params("mem_save_sender_role", i)
        dump = f"{p['role']}: {p['person']} or {p['namesake']}"
        assert _score("mem_save_sender_role", i, [MemoryWrite(key=p["role"], value=dump)]) == 0.0


def test_no_fixed_key_forgets_the_old_address_blind() -> None:
    blind = [MemoryWrite(key=ForgetOldAddress.OLD_KEYS[0], value=None)]
    share = fmean(_score("mem_forget_old_address", i, blind, split="train") for i in range(N))
    assert share <= 0.34, share  # one of five keys, drawn per instance
    spray = [MemoryWrite(key=k, value=None) for k in ForgetOldAddress.OLD_KEYS]
    assert all(_score("mem_forget_old_address", i, spray, split="train") == 0.0 for i in range(6))


def test_a_text_listing_every_address_is_not_the_address() -> None:
    from devices.suite.scoring import initial_view

    t = get_template("text_relation")
    for i in range(4):
        task = t.generate("test", i, 0)
        places = initial_view(task).rows("maps", "places")
        body = "; ".join(f"{r['name']}: {r['address']}" for r in places)
        send = ToolCall(name="messages.send", arguments={"phone": task.params["_phone"], "body": body})
        assert _score("text_relation", i, [send]) == 0.0


@pytest.mark.parametrize("template", ["unread_from_relation", "count_events_on_day", "overdue_count"])
def test_a_guessed_count_is_right_no_more_than_one_time_in_four(template: str) -> None:
    """Read from the checker itself: the right answer over instances, so a constant guess (after
    whatever lookups the checker also asks for) wins at most a quarter of them."""
    from collections import Counter

    from devices.suite.diff import AnswerIs
    from devices.suite.scoring import initial_view

    t = get_template(template)
    answers: Counter[Any] = Counter()
    for i in range(N):
        task = t.generate(t.splits()[-1], i, 0)  # type: ignore[arg-type]
        expected = t.expect(dict(task.params), initial_view(task)) or []
        answers.update(e.value for e in expected if isinstance(e, AnswerIs))
    assert sum(answers.values()) == N
    assert max(answers.values()) / N <= 0.25, answers


def test_the_cheapest_offer_is_never_a_tie() -> None:
    from devices.suite.scoring import initial_view

    t = get_template("favorite_for_guests")
    for i in range(30):
        for split in t.splits():
            products = initial_view(t.generate(split, i, 7)).rows("shopping", "products")  # type: ignore[arg-type]
            by_base: dict[str, list[float]] = {}
            for row in products:
                by_base.setdefault(row["name"].split(" (")[0], []).append(row["price"])
            assert all(len(set(prices)) == len(prices) for prices in by_base.values())
