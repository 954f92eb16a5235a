"""Sub-agent templates: judged on the collaboration the task needs — which sub-agent does which
part, what context each gets, and how one's result is merged into another's work.

Each part is a `DoneBy` expectation (a successful call made by that sub-agent, not by the main
agent or a wrong helper), hand-offs are `Delegated` expectations with the context the helper
must receive, and the whole state change is compared with the expected one. Several sub-agents
can reach the same app (the scheduler and the communicator both look up contacts), so credit
does not follow an app mechanically: it follows what the task needs.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from devices.sim.apps.maps import eta_minutes
from devices.suite.diff import Add, Allow, AnswerIs, Delegated, Expectation, Setting, same_value
from devices.suite.template import Observe, OracleScript, Template
from devices.suite.templates._hkit import (
    ALBUMS,
    LISTS,
    PLACES,
    PRODUCTS,
    STREETS,
    SUBJECTS,
    TITLES,
    TOPICS,
    Cluttered,
    ContactPair,
    derived_parameters,
    memory_value,
    person_pools,
    rid,
    row_where,
)
from devices.suite.templates._kit import finish
from devices.suite.templates._profile import declare
from schemas.actions import Delegate, MemoryRead

__all__ = ["TEMPLATES", "DoneBy"]

# The apps some helper works in: a sub-agent task's distractor apps come from here, so helpers
# beyond the one the task needs are on offer and the choice matters.
ALL_HELPER_APPS = ("calendar", "clock", "contacts", "messages", "email", "maps", "shopping",
                   "files", "notes", "settings")


def _args_have(arguments: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    for key, want in wanted.items():
        have = arguments.get(key)
        if isinstance(want, tuple) and len(want) == 2 and want[0] == "~":
            if not isinstance(have, str) or str(want[1]).casefold() not in have.casefold():
                return False
        elif not same_value(have, want):
            return False
    return True


@dataclass(frozen=True, repr=False)
class DoneBy(Expectation):
    """A successful call of `tool` with `arguments`, made by one of `agents` working as a
    delegated sub-agent. The same call made by the main agent or another helper is a violation:
    the work belongs to the helper the task needs."""

    agents: tuple[str, ...]
    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{'/'.join(self.agents)} calls {self.tool}({dict(self.arguments)})"

    def met(self, changes: Any, before: Any, after: Any) -> bool:
        return any(e.kind == "tool_call" and e.name == self.tool and e.ok
                   and e.agent in self.agents and e.parent == e.agent
                   and _args_have(e.arguments, self.arguments) for e in after.log)

    def violations(self, before: Any, after: Any) -> list[str]:
        return [f"{e.agent} made {self.tool} itself" for e in after.log
                if e.kind == "tool_call" and e.name == self.tool and e.ok
                and e.agent not in self.agents]


def delegate(agent: str, instruction: str, *calls: tuple[str, dict[str, Any]],
             context: dict[str, Any] | None = None) -> Delegate:
    """A delegation with a plan of tool calls and the context the helper needs."""
    plan: dict[str, Any] = {"tool_calls": [{"name": n, "arguments": a} for n, a in calls]}
    if context:
        plan["context"] = context
    return Delegate(agent=agent, instruction=instruction, arguments=plan)


def results(observe: Observe) -> list[Any]:
    """The values the last delegation's calls returned (LookupError when it failed)."""
    result = observe().result
    if result is None or not result.ok:
        raise LookupError(f"the delegation failed: {result.error if result else 'no result'}")
    return [r["value"] for r in result.value["results"]]


class _Team(Cluttered, Template):
    family = "subagent"
    checker = "collaboration"
    distractor_apps = ALL_HELPER_APPS

    @property
    def parameters(self) -> dict[str, Any]:  # type: ignore[override]
        return derived_parameters(self)

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        raise NotImplementedError


class _WithContact(ContactPair, _Team):
    def find_contact(self, p: dict[str, Any], agent: str, observe: Observe) -> Any:
        yield delegate(agent, f"Look up {p['first']} from {p['company']}.",
                       ("contacts.search", {"query": p["first"]}))
        return row_where(results(observe)[0], company=p["company"])

    def texted(self, p: dict[str, Any], before: Any, value: str,
               others_ok: tuple[str, ...]) -> list[Expectation]:
        """The communicator was handed `value` and texted it to the contact, and that text exists."""
        phone = self.contact(before, p["person"])["phone"]
        return [Delegated("communicator", (value,), others_ok=others_ok),
                DoneBy(("communicator",), "messages.send", {"body": ("~", value)}),
                Add("messages", "messages", {"phone": phone, "body": ("~", value)})]

    def text_contact(self, p: dict[str, Any], observe: Observe, instruction: str, body: str,
                     context: dict[str, Any]) -> Any:
        """The communicator looks the contact up, then texts them `body` (handed `context`)."""
        found = yield from self.find_contact(p, "communicator", observe)
        yield delegate("communicator", instruction, ("messages.send", {"phone": found["phone"], "body": body}),
                       context=context)


class PlaceToFriend(_WithContact):
    name = "sa_place_to_friend"
    apps = ("contacts", "maps", "messages")
    goal_template = ("Find the best-rated {category} near me and text its address to {first} from "
                     "{company}. Hand each part to the helper made for it.")
    pools = person_pools(place=PLACES)

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        best, other = PLACES.sample(rng, split, 2)
        return {**self.people(rng, split), "category": rng.choice(("bakery", "bookshop",
                                                                   "florist", "cafe")),
                "place": best, "other": other, "street": STREETS.pick(rng, split)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        places = [{"id": rid(rng, "pl"), "name": p["place"], "category": p["category"],
                   "address": p["street"], "rating": 4.9},
                  {"id": rid(rng, "pl"), "name": p["other"], "category": p["category"],
                   "address": "2 Side Alley", "rating": 4.1}]
        return {"maps": {"places": places}, "contacts": {"contacts": self.contacts(p, rng)}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [DoneBy(("navigator",), "maps.search_places"),
                *self.texted(p, before, p["street"], ("navigator",))]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield delegate("navigator", f"Find the best-rated {p['category']}.",
                       ("maps.search_places", {"query": p["category"]}))
        best = results(observe)[0][0]
        yield from self.text_contact(p, observe, "Text the address.", f"{best['name']} is at {best['address']}",
                                     {"address": best["address"]})
        yield finish()


class CheaperToNote(_Team):
    name = "sa_cheaper_to_note"
    apps = ("notes", "shopping")
    goal_template = ("Which is cheaper right now, '{a}' or '{b}'? Have the winner's name written "
                     "in a note titled 'Cheaper pick'.")
    pools = MappingProxyType({"a": PRODUCTS, "b": PRODUCTS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        a, b = PRODUCTS.sample(rng, split, 2)
        prices = rng.sample([round(x * 0.25, 2) for x in range(8, 60)], 2)
        return {"a": a, "b": b, "price_a": prices[0], "price_b": prices[1]}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        rows = [{"id": rid(rng, "pr"), "name": name, "category": "grocery", "price": price,
                 "stock": 20} for name, price in ((p["a"], p["price_a"]), (p["b"], p["price_b"]))]
        return {"shopping": {"products": rows}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        winner = p["a"] if p["price_a"] < p["price_b"] else p["b"]
        loser = p["b"] if winner == p["a"] else p["a"]
        return [DoneBy(("shopper",), "shopping.search"),
                Delegated("librarian", (winner,), others_ok=("shopper",)),
                DoneBy(("librarian",), "notes.create", {"title": "Cheaper pick",
                                                         "body": ("~", winner)}),
                Add("notes", "notes", {"title": "Cheaper pick", "body": ("~", winner)}),
                _NotMentioned("notes", "notes", "body", loser)]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield delegate("shopper", "Price both.", ("shopping.search", {"query": p["a"]}),
                       ("shopping.search", {"query": p["b"]}))
        first, second = results(observe)
        a = row_where(first, name=p["a"])
        b = row_where(second, name=p["b"])
        winner = a if a["price"] < b["price"] else b
        yield delegate("librarian", "Write the note.",
                       ("notes.create", {"title": "Cheaper pick", "body": winner["name"]}),
                       context={"winner": winner["name"]})
        yield finish()


@dataclass(frozen=True, repr=False)
class _NotMentioned(Expectation):
    """No row added to app.table mentions `text` in `column` (a list of both candidates fails)."""

    app: str
    table: str
    column: str
    text: str
    goal: bool = False

    def violations(self, before: Any, after: Any) -> list[str]:
        old = {r["id"] for r in before.rows(self.app, self.table)}
        return [f"{self.app}.{self.table} row {r['id']} also names {self.text!r}"
                for r in after.rows(self.app, self.table) if r["id"] not in old
                and self.text.casefold() in str(r.get(self.column, "")).casefold()]


class EmailToEvent(_Team):
    name = "sa_email_to_event"
    apps = ("calendar", "email")
    goal_template = ("Put the appointment from the email about the {topic} in my calendar as "
                     "'{title}', one hour long.")
    pools = MappingProxyType({"topic": TOPICS, "title": TITLES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        topic, other = TOPICS.sample(rng, split, 2)
        return {"topic": topic, "other": other, "title": TITLES.pick(rng, split),
                "date": f"2026-01-{rng.randint(12, 28):02d}", "hour": rng.randint(9, 16),
                "other_date": f"2026-01-{rng.randint(12, 28):02d}"}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        rows = [{"id": rid(rng, "em"), "folder": "inbox", "sender": "desk@service.test",
                 "to": ["me@example.com"], "subject": f"Your {topic} appointment",
                 "body": f"We will see you on {date} at {hour:02d}:00.",
                 "received_at": "2025-12-28T10:00", "read": False, "starred": False}
                for topic, date, hour in ((p["topic"], p["date"], p["hour"]),
                                          (p["other"], p["other_date"], p["hour"] - 1))]
        rng.shuffle(rows)
        return {"email": {"emails": rows}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        start = f"{p['date']}T{p['hour']:02d}:00"
        event = {"title": p["title"], "start": start, "end": f"{p['date']}T{p['hour'] + 1:02d}:00"}
        return [DoneBy(("communicator",), "email.search"),
                Delegated("scheduler", (start,), others_ok=("communicator",)),
                DoneBy(("scheduler",), "calendar.create_event", event),
                Add("calendar", "events", event)]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield delegate("communicator", "Find the appointment email.",
                       ("email.search", {"query": p["topic"]}))
        mail = next(r for r in results(observe)[0] if p["topic"] in r["subject"])
        date, time = mail["body"].split(" on ", 1)[1].rstrip(".").split(" at ")
        hour = int(time.split(":")[0])
        yield delegate("scheduler", "Book it.", ("calendar.create_event", {
            "title": p["title"], "start": f"{date}T{time}", "end": f"{date}T{hour + 1:02d}:00"}),
            context={"start": f"{date}T{time}"})
        yield finish()


class MeetingViaScheduler(_WithContact):
    name = "sa_meeting_via_scheduler"
    apps = ("calendar", "contacts")
    goal_template = ("Get '{title}' with {first} from {company} into my calendar on {date}, "
                     "{start}-{end}, with them as the guest. One helper can do all of it.")
    pools = MappingProxyType({"title": TITLES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        hour = rng.randint(9, 16)
        return {**self.people(rng, split), "title": TITLES.pick(rng, split),
                "date": f"2026-01-{rng.randint(12, 28):02d}", "start": f"{hour:02d}:00",
                "end": f"{hour + 1:02d}:00"}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"contacts": {"contacts": self.contacts(p, rng)}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        event = {"title": p["title"], "start": f"{p['date']}T{p['start']}",
                 "end": f"{p['date']}T{p['end']}", "attendees": [p["person"]]}
        return [DoneBy(("scheduler",), "contacts.search"), Delegated("scheduler"),
                DoneBy(("scheduler",), "calendar.create_event", event),
                Add("calendar", "events", event)]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        found = yield from self.find_contact(p, "scheduler", observe)
        yield delegate("scheduler", "Create the meeting.", ("calendar.create_event", {
            "title": p["title"], "start": f"{p['date']}T{p['start']}",
            "end": f"{p['date']}T{p['end']}", "attendees": [found["name"]]}),
            context={"guest": found["name"]})
        yield finish()


class NoteToSetting(_Team):
    name = "sa_note_to_setting"
    apps = ("notes", "settings")
    test_only = True
    goal_template = "Set the screen brightness to the level I wrote in my '{title}' note."
    pools = MappingProxyType({"title": SUBJECTS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        title, other = SUBJECTS.sample(rng, split, 2)
        level, other_level = rng.sample([x for x in range(5, 100, 5) if x != 60], 2)
        return {"title": title, "other": other, "level": level, "other_level": other_level}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        rows = [{"id": rid(rng, "nt"), "title": title, "body": f"Brightness {level}%",
                 "folder": "Personal", "pinned": False}
                for title, level in ((p["title"], p["level"]), (p["other"], p["other_level"]))]
        return {"notes": {"notes": rows}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [DoneBy(("librarian",), "notes.search"),
                Delegated("device_admin", (str(p["level"]),), others_ok=("librarian",)),
                DoneBy(("device_admin",), "settings.set", {"key": "brightness",
                                                           "value": p["level"]}),
                Setting("brightness", p["level"])]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield delegate("librarian", "Read the note.", ("notes.search", {"query": p["title"]}))
        note = row_where(results(observe)[0], title=p["title"])
        level = int(note["body"].split()[-1].rstrip("%"))
        yield delegate("device_admin", "Set brightness.",
                       ("settings.set", {"key": "brightness", "value": level}),
                       context={"level": level})
        yield finish()


class EtaToText(_WithContact):
    name = "sa_eta_to_text"
    apps = ("contacts", "maps", "messages")
    goal_template = ("Text {first} from {company} how many minutes it takes me to get from home "
                     "to {place} by {mode}.")
    pools = MappingProxyType({"place": PLACES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {**self.people(rng, split), "place": PLACES.pick(rng, split),
                "mode": rng.choice(("drive", "walk", "transit"))}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"contacts": {"contacts": self.contacts(p, rng)}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        minutes = str(eta_minutes("Home", p["place"], p["mode"]))
        return [DoneBy(("navigator",), "maps.eta", {"destination": p["place"],
                                                    "mode": p["mode"]}),
                *self.texted(p, before, minutes, ("navigator",))]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield delegate("navigator", "Travel time.", ("maps.eta", {
            "origin": "Home", "destination": p["place"], "mode": p["mode"]}))
        minutes = results(observe)[0]["eta_min"]
        yield from self.text_contact(p, observe, "Send it.", f"It takes me {minutes} minutes.",
                                     {"minutes": minutes})
        yield finish()


class PhotoToContact(_WithContact):
    name = "sa_photo_to_contact"
    apps = ("contacts", "files")
    goal_template = "Share the {album} photo from {date} with {first} from {company}."
    pools = MappingProxyType({"album": ALBUMS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        days = rng.sample(range(3, 28), 2)
        return {**self.people(rng, split), "album": ALBUMS.pick(rng, split), "days": days,
                "date": f"2025-12-{days[0]:02d}"}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        files = []
        for day in p["days"]:
            name = f"IMG_{rng.randint(1000, 9999)}.jpg"
            files.append({"id": rid(rng, "f"), "path": f"/sdcard/{p['album']}/{name}",
                          "name": name, "kind": "photo", "album": p["album"], "tags": [],
                          "size_kb": 2000, "created_at": f"2025-12-{day:02d}T12:00"})
        return {"files": {"files": files}, "contacts": {"contacts": self.contacts(p, rng)}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        photo = next(r for r in before.rows("files", "files")
                     if r["album"] == p["album"] and r["created_at"].startswith(p["date"]))
        phone = self.contact(before, p["person"])["phone"]
        return [DoneBy(("communicator", "scheduler"), "contacts.search"),
                Delegated("librarian", (p["person"],), others_ok=("communicator", "scheduler")),
                DoneBy(("librarian",), "files.share", {"id": photo["id"],
                                                       "contact": p["person"]}),
                Add("messages", "messages", {"phone": phone, "body": f"[file] {photo['name']}"})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        found = yield from self.find_contact(p, "communicator", observe)
        yield delegate("librarian", "Find the photo.", ("files.search", {"query": p["album"]}))
        photo = next(r for r in results(observe)[0]
                     if r["album"] == p["album"] and r["created_at"].startswith(p["date"]))
        yield delegate("librarian", "Share it.",
                       ("files.share", {"id": photo["id"], "contact": found["name"]}),
                       context={"recipient": found["name"]})
        yield finish()


class CheckoutHome(_Team):
    name = "sa_checkout_home"
    apps = ("shopping",)
    goal_template = "Have my cart ordered and sent to my home address."
    pools = MappingProxyType({"street": STREETS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        home, work = STREETS.sample(rng, split, 2)
        return {"street": home, "work": work, "product": PRODUCTS.pick(rng, split)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        pid = rid(rng, "pr")
        return {"memory": {"home_address": p["street"], "work_address": p["work"]},
                "shopping": {"products": [{"id": pid, "name": p["product"],
                                           "category": "grocery", "price": 3.0, "stock": 9}],
                             "cart": [{"id": rid(rng, "ci"), "product_id": pid, "quantity": 1}]}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Delegated("shopper", (p["street"],)),
                DoneBy(("shopper",), "shopping.checkout", {"address": p["street"]}),
                Add("shopping", "orders", {"address": p["street"]}),
                Allow("shopping", "cart", kinds=("removed",)),
                Allow("shopping", "products", kinds=("changed",), fields=("stock",))]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield MemoryRead(key="home_address")
        address = memory_value(observe())
        yield delegate("shopper", "Check out.", ("shopping.checkout", {"address": address}),
                       context={"address": address})
        yield finish()


class LatestSubjectToNote(_WithContact):
    name = "sa_latest_subject_to_note"
    apps = ("contacts", "email", "notes")
    goal_template = ("Make a note titled 'To answer' whose text is the subject of the latest email "
                     "from {first} from {company}.")
    pools = MappingProxyType({"subject": SUBJECTS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        subject, older, namesakes = SUBJECTS.sample(rng, split, 3)
        return {**self.people(rng, split), "subject": subject, "older": older,
                "namesakes": namesakes}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        contacts = self.contacts(p, rng)
        by_name = {c["name"]: c["email"] for c in contacts}
        mails = [{"id": rid(rng, "em"), "folder": "inbox", "sender": by_name[who],
                  "to": ["me@example.com"], "subject": subject, "body": "Hello.",
                  "received_at": when, "read": False, "starred": False}
                 for who, subject, when in ((p["person"], p["older"], "2025-12-20T10:00"),
                                            (p["person"], p["subject"], "2025-12-27T10:00"),
                                            (p["namesake"], p["namesakes"], "2025-12-29T10:00"))]
        rng.shuffle(mails)
        return {"contacts": {"contacts": contacts}, "email": {"emails": mails}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [DoneBy(("communicator",), "email.search"),
                Delegated("librarian", (p["subject"],), others_ok=("communicator", "scheduler")),
                DoneBy(("librarian",), "notes.create", {"title": "To answer",
                                                         "body": p["subject"]}),
                Add("notes", "notes", {"title": "To answer", "body": p["subject"]})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        found = yield from self.find_contact(p, "communicator", observe)
        yield delegate("communicator", "Their emails.", ("email.search", {"query": found["email"]}))
        mails = [r for r in results(observe)[0] if r["sender"] == found["email"]]
        latest = max(mails, key=lambda r: r["received_at"])
        yield delegate("librarian", "Write the note.",
                       ("notes.create", {"title": "To answer", "body": latest["subject"]}),
                       context={"subject": latest["subject"]})
        yield finish()


class ParallelErrands(_Team):
    name = "sa_parallel_errands"
    apps = ("maps", "shopping")
    goal_template = ("Two errands: put {quantity} of '{product}' in my cart, and save {place} to "
                     "my '{list}' list.")
    pools = MappingProxyType({"product": PRODUCTS, "place": PLACES, "list": LISTS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"product": PRODUCTS.pick(rng, split), "place": PLACES.pick(rng, split),
                "list": LISTS.pick(rng, split), "quantity": rng.randint(2, 5)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"shopping": {"products": [{"id": rid(rng, "pr"), "name": p["product"],
                                           "category": "home", "price": 6.0, "stock": 30}]},
                "maps": {"places": [{"id": rid(rng, "pl"), "name": p["place"],
                                     "category": "venue", "address": "5 Quay", "rating": 4.3}]}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        pid = before.rows("shopping", "products")
        product = next(r["id"] for r in pid if r["name"] == p["product"])
        place = next(r["id"] for r in before.rows("maps", "places") if r["name"] == p["place"])
        return [Delegated("shopper", others_ok=("navigator",)),
                DoneBy(("shopper",), "shopping.add_to_cart", {"product_id": product,
                                                              "quantity": p["quantity"]}),
                DoneBy(("navigator",), "maps.save_place", {"place_id": place,
                                                           "list": p["list"]}),
                Add("shopping", "cart", {"product_id": product, "quantity": p["quantity"]}),
                Add("maps", "saved", {"place_id": place, "list": p["list"]})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield delegate("shopper", "Find it.", ("shopping.search", {"query": p["product"]}))
        product = row_where(results(observe)[0], name=p["product"])["id"]
        yield delegate("shopper", "Add it.", ("shopping.add_to_cart", {
            "product_id": product, "quantity": p["quantity"]}))
        yield delegate("navigator", "Find it.", ("maps.search_places", {"query": p["place"]}))
        place = row_where(results(observe)[0], name=p["place"])["id"]
        yield delegate("navigator", "Save it.", ("maps.save_place", {"place_id": place,
                                                                      "list": p["list"]}))
        yield finish()


class AlarmBeforeEvent(_Team):
    name = "sa_alarm_before_event"
    apps = ("calendar", "clock")
    goal_template = "Set an alarm one hour before my '{title}' starts."
    test_only = True
    pools = MappingProxyType({"title": TITLES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        title, other = TITLES.sample(rng, split, 2)
        return {"title": title, "other": other, "hour": rng.randint(8, 18),
                "minute": rng.choice((0, 15, 30, 45)), "date": f"2026-01-{rng.randint(16, 27):02d}"}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        rows = [{"id": rid(rng, "ev"), "title": title, "start": f"{p['date']}T{h:02d}:{p['minute']:02d}",
                 "end": f"{p['date']}T{h + 1:02d}:{p['minute']:02d}", "location": "",
                 "attendees": [], "notes": ""}
                for title, h in ((p["title"], p["hour"]), (p["other"], p["hour"] - 2))]
        return {"calendar": {"events": rows}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        time = f"{p['hour'] - 1:02d}:{p['minute']:02d}"
        return [DoneBy(("scheduler",), "calendar.search"), Delegated("scheduler"),
                DoneBy(("scheduler",), "clock.set_alarm", {"time": time}),
                Add("clock", "alarms", {"time": time})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield delegate("scheduler", "Find the event.", ("calendar.search", {"query": p["title"]}))
        event = row_where(results(observe)[0], title=p["title"])
        hour, minute = event["start"][11:].split(":")
        yield delegate("scheduler", "Set the alarm.", ("clock.set_alarm", {
            "time": f"{int(hour) - 1:02d}:{minute}", "label": p["title"]}))
        yield finish()


class CloserOfTwo(_Team):
    name = "sa_closer_of_two"
    apps = ("maps",)
    checker = "state_and_answer"
    goal_template = ("Which is quicker to reach from home by {mode}: {a} or {b}? Have it worked "
                     "out and tell me just the name.")
    pools = MappingProxyType({"a": PLACES, "b": PLACES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        mode = rng.choice(("drive", "walk", "transit"))
        while True:
            a, b = PLACES.sample(rng, split, 2)
            if eta_minutes("Home", a, mode) != eta_minutes("Home", b, mode):
                return {"a": a, "b": b, "mode": mode, "_numbers": rng.sample(range(2, 400), 2)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        places = [{"id": rid(rng, "pl"), "name": name, "category": "venue",
                   "address": f"{number} Lantern Row", "rating": 4.0}
                  for name, number in zip((p["a"], p["b"]), p["_numbers"], strict=True)]
        return {"maps": {"places": places}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        quicker = min((p["a"], p["b"]), key=lambda n: eta_minutes("Home", n, p["mode"]))
        return [DoneBy(("navigator",), "maps.eta", {"destination": p["a"], "mode": p["mode"]}),
                DoneBy(("navigator",), "maps.eta", {"destination": p["b"], "mode": p["mode"]}),
                Delegated("navigator"), AnswerIs(quicker)]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield delegate("navigator", "Time both trips.",
                       ("maps.eta", {"origin": "Home", "destination": p["a"], "mode": p["mode"]}),
                       ("maps.eta", {"origin": "Home", "destination": p["b"], "mode": p["mode"]}))
        first, second = results(observe)
        quicker = first if first["eta_min"] < second["eta_min"] else second
        yield finish(quicker["destination"])


TEMPLATES = (PlaceToFriend, CheaperToNote, EmailToEvent, MeetingViaScheduler, NoteToSetting,
             EtaToText, PhotoToContact, CheckoutHome, LatestSubjectToNote, ParallelErrands,
             AlarmBeforeEvent, CloserOfTwo)

# (oracle actions, lookups) per template, measured by
# devices.suite.templates._profile.measure; the family tests re-measure them.
declare(TEMPLATES, {
    "sa_place_to_friend": (3, 2),
    "sa_cheaper_to_note": (2, 1),
    "sa_email_to_event": (2, 1),
    "sa_meeting_via_scheduler": (2, 1),
    "sa_note_to_setting": (2, 1),
    "sa_eta_to_text": (3, 2),
    "sa_photo_to_contact": (3, 2),
    "sa_checkout_home": (2, 1),
    "sa_latest_subject_to_note": (3, 2),
    "sa_parallel_errands": (4, 2),
    "sa_alarm_before_event": (2, 1),
    "sa_closer_of_two": (2, 1),
}, chains={  # independent lookups (neither decides the other) chain as one
    "sa_parallel_errands": 1,
    "sa_eta_to_text": 1,
    "sa_place_to_friend": 1,
    "sa_photo_to_contact": 1,
})
