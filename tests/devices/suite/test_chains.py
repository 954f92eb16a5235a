"""Genuine looping chains (devices.suite.templates.tool_chains, tool_chains_more): the oracle solves
every split on suite seeds 0 and 7; an oracle that skips one lookup (takes the first row a search
returns, texts the namesake, pays what was paid) scores 0. How deep they make the hard tier is
held in test_stats.py."""

from __future__ import annotations

import importlib
from statistics import fmean
from typing import Any

import pytest

from devices.harness import Harness
from devices.harness.episode import play
from devices.sim import SimPhone
from devices.suite.policies import OraclePolicy
from devices.suite.registry import get_template
from devices.suite.scoring import initial_view, score_final_state
from devices.suite.stats import oracle_run
from devices.suite.templates import tool_chains
from schemas.actions import ToolCall

MODULES = ("tool_chains", "tool_chains_more")
TEMPLATES = [cls() for m in MODULES for cls in importlib.import_module(f"devices.suite.templates.{m}").TEMPLATES]


@pytest.mark.parametrize("seed", [0, 7])
def test_the_oracle_scores_one_on_every_split(seed: int) -> None:
    phone = SimPhone()
    failed = {}
    for template in TEMPLATES:
        for split in template.splits():
            for i in range(2):
                _, score, _, _ = oracle_run(phone, template, split, i, seed)
                if score != 1.0:
                    failed[f"{template.name}-{split}-{i}"] = score
    assert not failed


def test_they_are_genuine_long_chains_over_many_apps() -> None:
    phone = SimPhone()
    apps = set()
    for template in TEMPLATES:
        assert template.tier == "hard" and template.chain >= 2 and "__and__" not in template.name
        assert len(template.lookups) >= 2
        apps |= set(template.apps)
        actions = fmean(oracle_run(phone, template, template.splits()[0], i, 0)[0] for i in range(2))
        assert actions >= 14, (template.name, actions)
    assert len(apps) >= 10, sorted(apps)


def _first_row(rows: Any, **where: Any) -> Any:
    """A sloppy choice: the first row of a search, whatever it says."""
    rows = rows if isinstance(rows, list) else [rows] if isinstance(rows, dict) else []
    return rows[0] if rows else None


# Templates whose exact pick guards a look-alike the search lists first or in random order
# (an "Annex" rated higher, a planning event, a namesake's payee, a cover version, an old note copy).
SLOPPY = [t for t in TEMPLATES if t.name not in ("late_for_todays_meetings", "decline_emails_update_events",
                                                  "meeting_requests_from_texts", "family_forecast_texts",
                                                  "hotels_for_upcoming_flights", "flight_packing_reminders",
                                                  "flight_events_with_forecast", "hotel_stays_forecast_to_relation",
                                                  "conference_travel", "birthday_gifts_shipped")]


@pytest.mark.parametrize("template", SLOPPY, ids=lambda t: t.name)
def test_taking_the_first_row_instead_of_the_right_one_scores_zero(template: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module(type(template).__module__)
    monkeypatch.setattr(module, "_pick", _first_row)
    if module is not tool_chains:
        monkeypatch.setattr(tool_chains, "_pick", _first_row)
    phone = SimPhone()
    scores = [oracle_run(phone, template, template.splits()[0], i, 0)[1] for i in range(8)]
    # Where a search lists rows in random order the first can be the right one by chance, for
    # every row of the loop at once: rarely (cook_plan_to_cart: one time in sixteen).
    assert fmean(scores) <= 0.25, scores


class _Planted:
    name = "planted"

    def __init__(self, actions: list[Any]) -> None:
        self.actions = actions

    def begin(self, goal: str, catalogue: Any) -> None:
        self._left = list(self.actions)

    def next_action(self, observation: Any) -> Any:
        from schemas.actions import Finish

        return self._left.pop(0) if self._left else Finish()


def _score(task: Any, actions: list[Any]) -> float:
    harness = Harness(SimPhone())
    play(harness, task, _Planted(actions))
    return score_final_state(task, harness.final_state()).score


def _oracle_actions(task: Any) -> list[Any]:
    harness = Harness(SimPhone())
    return [a for a in play(harness, task, OraclePolicy()).actions if isinstance(a, ToolCall)]


def test_texting_the_namesake_instead_of_the_attendee_scores_zero() -> None:
    template = get_template("meeting_addresses_to_attendees")
    for i in range(3):
        task = template.generate("dev", i, 0)
        actions = _oracle_actions(task)
        assert _score(task, actions) == 1.0
        contacts = initial_view(task).rows("contacts", "contacts")
        by_phone = {c["phone"]: c for c in contacts}
        send = next(a for a in actions if a.name == "messages.send")
        person = by_phone[send.arguments["phone"]]
        namesake = next(c for c in contacts if c["name"].split()[0] == person["name"].split()[0]
                        and c["id"] != person["id"])
        wrong = [ToolCall(name=a.name, arguments={**a.arguments, "phone": namesake["phone"]}) if a is send else a
                 for a in actions]
        assert _score(task, wrong) == 0.0


def test_paying_an_invoice_already_paid_or_a_text_listing_every_address_scores_zero() -> None:
    task = get_template("unpaid_invoices_from_relation").generate("dev", 0, 0)
    actions = _oracle_actions(task)
    assert _score(task, actions) == 1.0
    paid = next(r for r in initial_view(task).rows("bank", "payments") if str(r.get("memo", "")).startswith("INV-"))
    pay = next(a for a in actions if a.name == "bank.pay")
    extra = ToolCall(name="bank.pay", arguments={**pay.arguments, "amount": paid["amount"], "memo": paid["memo"]})
    assert _score(task, [*actions, extra]) == 0.0  # the one already paid is paid twice

    task = get_template("party_guests_from_note").generate("dev", 0, 0)
    actions = _oracle_actions(task)
    places = initial_view(task).rows("maps", "places")
    dump = "; ".join(p["address"] for p in places)
    spray = [ToolCall(name=a.name, arguments={**a.arguments, "body": dump}) if a.name == "messages.send" else a
             for a in actions]
    assert _score(task, actions) == 1.0 and _score(task, spray) == 0.0
