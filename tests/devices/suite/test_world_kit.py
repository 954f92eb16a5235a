"""The World kit's shared oracle and world-building helpers keep the exact choices the templates
made before they shared them: which row wins a tie, what counts as 'from today', which orders
are dated, and that a distractor value is never traced as drawn."""

from __future__ import annotations

import random

from devices.suite.templates._vocab import PLACES3
from devices.suite.templates._world import (
    World,
    cheapest,
    earliest_from,
    last_order,
    latest,
    person_by_relation,
)
from schemas.actions import ToolCall


def test_latest_takes_the_last_of_equal_keys_among_matching_rows() -> None:
    rows = [{"id": "a", "at": "2", "dir": "in"}, {"id": "b", "at": "3", "dir": "out"},
            {"id": "c", "at": "2", "dir": "in"}, {"id": "d", "at": "1", "dir": "in"}]
    assert latest(rows, "at", dir="in")["id"] == "c"
    assert latest(rows, "at")["id"] == "b"
    assert latest(rows, "at", dir="sideways") is None
    assert latest({"id": "x", "at": "0"}, "at")["id"] == "x"  # a single row result
    assert latest(None, "at") is None  # a failed lookup


def test_earliest_from_counts_since_itself_and_keeps_the_first_of_equals() -> None:
    rows = [{"id": "past", "day": "01"}, {"id": "today", "day": "05"}, {"id": "twin", "day": "05"},
            {"id": "later", "day": "09", "kind": "hotel"}]
    assert earliest_from(rows, "day", "05")["id"] == "today"
    assert earliest_from(rows, "day", "06")["id"] == "later"
    assert earliest_from(rows, "day", "05", kind="hotel")["id"] == "later"
    assert earliest_from(rows, "day", "10") is None


def test_last_order_skips_undated_orders() -> None:
    orders = [{"id": "o1", "placed_at": "2026-01-02"}, {"id": "o2", "placed_at": ""},
              {"id": "o3", "placed_at": "2026-01-09"}, {"id": "o4"}]
    assert last_order(orders)["id"] == "o3"
    assert last_order([{"id": "o2", "placed_at": ""}]) is None


def test_cheapest_keeps_the_first_of_equal_prices() -> None:
    offers = [{"id": "p1", "price": 4.0}, {"id": "p2", "price": 2.5}, {"id": "p3", "price": 2.5}]
    assert cheapest(offers)["id"] == "p2"


def test_other_never_returns_the_excluded_value_and_is_not_traced() -> None:
    w = World(random.Random(3), "dev")
    answer = w.draw(PLACES3)
    picks = {w.other(PLACES3, answer) for _ in range(40)}
    assert answer not in picks and picks <= set(PLACES3.values("dev"))
    assert len(w.other(PLACES3, answer, 2)) == 2
    assert w.drawn == [(PLACES3, answer)]


def test_person_by_relation_searches_then_wants_exactly_one_match() -> None:
    from schemas.observations import Observation

    def run(found: list[dict[str, str]]) -> tuple[list[object], object]:
        script = person_by_relation(lambda: obs, "sister")
        actions = [next(script)]
        obs = Observation.model_validate({"step": 1, "screen": [], "clock_ms": 0,
                                          "result": {"name": "contacts.search", "ok": True, "value": found}})
        try:
            script.send(None)
        except StopIteration as stop:
            return actions, stop.value
        raise AssertionError("the helper acted more than once")

    sister = {"id": "c1", "name": "Ines Sato", "relation": "sister"}
    actions, person = run([sister, {"id": "c2", "name": "Ines Kowal", "relation": ""}])
    assert actions == [ToolCall(name="contacts.search", arguments={"query": "sister"})]
    assert person == sister
    assert run([sister, {**sister, "id": "c3"}])[1] is None  # two sisters: ambiguous, no guess
