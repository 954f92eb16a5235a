"""Deeper skill templates: a chain of lookups finds the skill's arguments, then the right skill
(among near-miss ones) runs once.

- `skill_meeting_with_sender`: who emailed about a subject (an address), which contact that is
  (a namesake works elsewhere), when an anchor event on a day ends (the same title is on
  another day), then `schedule_meeting` for the hour after it.
- `skill_reorder_latest`: the most recent order (not an older one), its product's name (the
  order line has only an id, so `shopping.get_product`), the cheaper listing of that name
  now, then `quick_reorder` to the order's address in its quantity (not `stock_up`).
"""

from __future__ import annotations

import random
from types import MappingProxyType
from typing import Any

from devices.suite.diff import Add, Allow, Expectation
from devices.suite.template import Observe, OracleScript
from devices.suite.templates._hkit import (
    PRODUCTS,
    STREETS,
    SUBJECTS,
    TITLES,
    person_pools,
    rid,
    row_where,
    rows_of,
)
from devices.suite.templates._kit import call, finish
from devices.suite.templates._profile import declare
from devices.suite.templates.skills import QuickReorder, _Meeting
from schemas.actions import UseSkill

__all__ = ["TEMPLATES"]


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


class MeetingWithSender(_Meeting):
    name = "skill_meeting_with_sender"
    skill = "schedule_meeting"
    goal_template = ("Right after my '{anchor}' on {date}, set up an hour of '{title}' with whoever "
                     "emailed me about '{subject}', and text them the invitation.")
    pools = person_pools(title=TITLES, anchor=TITLES, subject=SUBJECTS)

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        title, anchor = TITLES.sample(rng, split, 2)
        subject, other_subject = SUBJECTS.sample(rng, split, 2)
        day = rng.randint(16, 26)
        return {**self.people(rng, split), "title": title, "anchor": anchor, "subject": subject,
                "_other_subject": other_subject, "date": f"2026-01-{day:02d}",
                "_other_date": f"2026-01-{day + 1:02d}", "_end_at": rng.randrange(9 * 60, 16 * 60, 15)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        contacts = self.contacts(p, rng)
        by_name = {c["name"]: c["email"] for c in contacts}
        mails = [{"id": rid(rng, "em"), "folder": "inbox", "sender": by_name[who], "to": ["me@example.com"],
                  "subject": subject, "body": "Hello.", "received_at": when, "read": False, "starred": False}
                 for who, subject, when in ((p["person"], p["subject"], "2025-12-28T10:00"),
                                            (p["namesake"], p["_other_subject"], "2025-12-30T10:00"))]
        events = [{"id": rid(rng, "ev"), "title": p["anchor"], "start": f"{date}T{_hhmm(end - 45)}",
                   "end": f"{date}T{_hhmm(end)}", "location": "", "attendees": [], "notes": ""}
                  for date, end in ((p["date"], p["_end_at"]), (p["_other_date"], p["_end_at"] - 60))]
        rng.shuffle(mails)
        rng.shuffle(events)
        return {"contacts": {"contacts": contacts}, "email": {"emails": mails}, "calendar": {"events": events}}

    def span(self, p: dict[str, Any]) -> dict[str, str]:
        return {"title": p["title"], "start": f"{p['date']}T{_hhmm(p['_end_at'])}",
                "end": f"{p['date']}T{_hhmm(p['_end_at'] + 60)}"}

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {**self.span(p), "contact": p["person"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        phone = self.contact(before, p["person"])["phone"]
        return [Add("calendar", "events", {**self.span(p), "attendees": [p["person"]]}),
                Add("messages", "messages", {"phone": phone, "direction": "out", "body": ("~", p["title"])}),
                Allow("email", "emails", kinds=("changed",), fields=("read",))]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("email.search", query=p["subject"], folder="inbox")
        sender = row_where(rows_of(observe()), subject=p["subject"])["sender"]
        yield call("contacts.search", query=sender)
        person = row_where(rows_of(observe()), email=sender)["name"]
        yield call("calendar.search", query=p["anchor"])
        end = row_where((r for r in rows_of(observe()) if r["start"].startswith(p["date"])),
                        title=p["anchor"])["end"]
        hour, minute = (int(x) for x in end[11:].split(":"))
        yield UseSkill(skill=self.skill, arguments={
            "title": p["title"], "start": end, "end": f"{p['date']}T{_hhmm(hour * 60 + minute + 60)}",
            "contact": person})
        yield finish()


class ReorderLatest(QuickReorder):
    """quick_reorder's order (same skill arguments and change), but the product, quantity and
    address come from the latest order and the cheapest listing is found by name."""

    name = "skill_reorder_latest"
    skill = "quick_reorder"
    apps = ("shopping",)
    goal_template = ("Order again what my most recent order had, in the same quantity and to the same "
                     "address, from whichever listing of it is cheapest now.")
    pools = MappingProxyType({"product": PRODUCTS, "street": STREETS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        product, older = PRODUCTS.sample(rng, split, 2)
        street, old_street = STREETS.sample(rng, split, 2)
        return {"product": product, "older": older, "street": street, "old_street": old_street,
                "quantity": rng.randint(2, 4), "cheap": round(rng.uniform(2, 6), 2),
                "dear": round(rng.uniform(7, 14), 2), "placed": f"2025-12-{rng.randint(15, 30):02d}"}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        dear, cheap, other = ({"id": rid(rng, "pr"), "name": name, "category": "grocery", "price": price,
                               "stock": 25} for name, price in ((p["product"], p["dear"]),
                                                               (p["product"], p["cheap"]),
                                                               (p["older"], 3.5)))
        orders = [{"id": rid(rng, "or"), "items": [{"product_id": dear["id"], "quantity": p["quantity"]}],
                   "total": round(p["dear"] * p["quantity"], 2), "address": p["street"],
                   "status": "delivered", "placed_at": p["placed"]},
                  {"id": rid(rng, "or"), "items": [{"product_id": other["id"], "quantity": 1}],
                   "total": 3.5, "address": p["old_street"], "status": "delivered", "placed_at": "2025-11-02"}]
        products = [dear, cheap, other]
        rng.shuffle(products)
        rng.shuffle(orders)
        return {"shopping": {"products": products, "orders": orders}}

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("shopping.list_orders")
        latest = max((r for r in rows_of(observe()) if r.get("placed_at")), key=lambda r: r["placed_at"])
        line = latest["items"][0]
        yield call("shopping.get_product", id=line["product_id"])
        name = observe().result.value["name"]
        yield call("shopping.search", query=name)
        cheapest = min((r for r in rows_of(observe()) if r["name"] == name), key=lambda r: r["price"])
        yield UseSkill(skill=self.skill, arguments={"product_id": cheapest["id"], "address": latest["address"],
                                                    "quantity": line["quantity"]})
        yield finish()


TEMPLATES = (MeetingWithSender, ReorderLatest)

# (oracle actions, lookups) per template, measured by devices.suite.templates._profile.measure.
declare(TEMPLATES, {
    "skill_meeting_with_sender": (4, 3),
    "skill_reorder_latest": (4, 3),
}, chains={"skill_meeting_with_sender": 2})  # the anchor lookup is independent of sender → contact
