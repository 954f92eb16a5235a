"""Memory templates: the fact a task needs was written in an earlier session and exists only in
memory (loaded from the task's initial state), beside distractor memories that look alike.

Goals refer indirectly ("my sister", "my usual order", "where I parked last"), so copying the
goal solves nothing; the phone holds look-alike rows (same first names, similar places and
products), so guessing fails; every write is checked against the whole state change, memory
included, so spraying fails.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from devices.suite.diff import Add, Allow, AnswerIs, Expectation, Setting, Update, norm_text
from devices.suite.template import Observe, OracleScript, Template
from devices.suite.templates._hkit import (
    CODES,
    LEVELS,
    PHRASES,
    PLACES,
    PRODUCTS,
    STREETS,
    SUBJECTS,
    TIMES,
    TITLES,
    TOPICS,
    WEEKDAYS,
    Cluttered,
    World,
    contact_named,
    derived_parameters,
    memory_value,
    parse_count,
    person_pools,
    rid,
    row_where,
    rows_of,
)
from devices.suite.templates._kit import call, finish
from devices.suite.templates._profile import declare
from devices.suite.templates._world import FIRST
from schemas.actions import MemoryRead, MemoryWrite

__all__ = ["TEMPLATES", "MemoryForgotten", "MemoryUpdated"]

# Employers tell namesakes apart (memory notes where each person works).
EMPLOYERS = ("Northwind", "Bluegate", "Copperline", "Driftwood Labs", "Elmstead", "Foxhollow",
             "Greyfield", "Harrowgate")
# Relations a memory names a person by; each template draws the target and distractors.
RELATIONS = ("sister", "brother", "partner", "landlord", "manager", "neighbour", "cousin",
             "accountant", "trainer", "dentist")


@dataclass(frozen=True, repr=False)
class MemoryForgotten(Expectation):
    """Memory entry `key` was removed."""

    key: str

    @property
    def label(self) -> str:
        return f"forget memory {self.key}"

    def met(self, changes: Any, before: Any, after: Any) -> bool:
        return self.key in changes.memory and self.key not in after.memory

    def claims_memory(self, key: str, value: Any) -> bool:
        return key == self.key and value is None

    def violations(self, before: Any, after: Any) -> list[str]:
        # Forgetting a key that is not there changes nothing, so spraying guesses would be free:
        # every other forget the episode tried counts against it.
        return [f"tried to forget {e.arguments.get('key')!r}, which the goal did not ask"
                for e in after.log[len(before.log):]
                if e.kind == "memory_write" and e.arguments.get("value") is None
                and e.arguments.get("key") != self.key]


@dataclass(frozen=True, repr=False)
class MemoryUpdated(Expectation):
    """Memory entry `key` (which existed) now mentions `value`."""

    key: str
    value: str

    @property
    def label(self) -> str:
        return f"memory {self.key} mentions {self.value!r}"

    def met(self, changes: Any, before: Any, after: Any) -> bool:
        return (self.key in changes.memory and self.key in before.memory
                and norm_text(self.value) in norm_text(after.memory.get(self.key, "")))

    def claims_memory(self, key: str, value: Any) -> bool:
        return key == self.key and value is not None and norm_text(self.value) in norm_text(value)


class _Memory(Cluttered, Template):
    family = "memory"
    checker = "final_state"
    diff_memory = True

    @property
    def parameters(self) -> dict[str, Any]:  # type: ignore[override]
        return derived_parameters(self)

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        raise NotImplementedError


class _Relation(_Memory):
    """A task about the person memory names by a relation. Memory keeps only their first name
    (people remember first names) and, in a separate note, where they work; the phone holds a
    namesake (same first name, another employer) and the other relations' people. So the
    oracle reads memory twice (who, then which one) before it can look the contact up."""

    pools = person_pools()

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        world = World(rng, split)
        relation, *other_relations = rng.sample(RELATIONS, 3)
        person = world.person()
        namesake = world.person(person.split()[0])
        others = [world.person() for _ in other_relations]
        companies = rng.sample(EMPLOYERS, 4)
        return {"relation": relation, "person": person, "surname": person.split()[1],
                "namesake": namesake, "other_relations": other_relations, "others": others,
                "_companies": companies, "_birthday": f"2026-0{rng.randint(2, 9)}-1{rng.randint(0, 9)}",
                **self.extra(rng, split)}

    def extra(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {}

    def people_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        world = World(rng, "train")
        people = [p["person"], p["namesake"], *p["others"]]
        employer = dict(zip(people, p["_companies"], strict=True))
        contacts = [world.contact(n, company=employer[n]) for n in people]
        rng.shuffle(contacts)
        memory: dict[str, Any] = {p["relation"]: p["person"].split()[0],
                                  f"{p['relation']}_birthday": p["_birthday"]}
        for relation, name in zip(p["other_relations"], p["others"], strict=True):
            memory[relation] = name.split()[0]
        for day, name in enumerate((p["person"], *p["others"]), start=10):
            memory[f"note/2025-11-{day}"] = f"{name.split()[0]} works at {employer[name]}."
        return {"memory": memory, "contacts": {"contacts": contacts}}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return self.people_state(p, rng)

    @staticmethod
    def who(p: dict[str, Any], observe: Observe) -> Any:
        """Memory (who), memory (which one), contacts (their row): the row, read from
        observations only."""
        yield MemoryRead(query=p["relation"])
        first = memory_value(observe(), p["relation"])
        yield MemoryRead(query=f"{first} works at")
        note = next(v for k, v in observe().result.value.items()
                    if k.startswith("note/") and v.startswith(f"{first} works at "))
        company = note.removeprefix(f"{first} works at ").rstrip(".")
        yield call("contacts.search", query=first)
        return row_where(rows_of(observe()), company=company)


class TextRelation(_Relation):
    name = "mem_text_relation"
    goal_template = "Text my {relation}: \"{phrase}\"."
    apps = ("contacts", "messages")
    pools = person_pools(phrase=PHRASES)

    def extra(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"phrase": PHRASES.pick(rng, split)}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        phone = contact_named(before, p["person"])["phone"]
        return [Add("messages", "messages", {"phone": phone, "direction": "out",
                                             "body": ("~", p["phrase"])})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        contact = yield from self.who(p, observe)
        yield call("messages.send", phone=contact["phone"], body=p["phrase"])
        yield finish()


class EmailRelation(_Relation):
    name = "mem_email_relation"
    goal_template = "Email my {relation} with the subject '{subject}' saying \"{phrase}\"."
    apps = ("contacts", "email")
    pools = person_pools(phrase=PHRASES, subject=SUBJECTS)

    def extra(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"phrase": PHRASES.pick(rng, split), "subject": SUBJECTS.pick(rng, split)}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        address = contact_named(before, p["person"])["email"]
        return [Add("email", "emails", {"folder": "sent", "to": [address],
                                         "subject": p["subject"], "body": ("~", p["phrase"])})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        contact = yield from self.who(p, observe)
        yield call("email.send", to=[contact["email"]], subject=p["subject"], body=p["phrase"])
        yield finish()


class RelationPhone(_Relation):
    name = "mem_relation_phone"
    test_only = True
    checker = "state_and_answer"
    goal_template = "What's my {relation}'s phone number? Just the number, please."
    apps = ("contacts", "messages")

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [AnswerIs(contact_named(before, p["person"])["phone"])]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        contact = yield from self.who(p, observe)
        yield finish(contact["phone"])


class StarRelation(_Relation):
    name = "mem_star_relation"
    goal_template = "Star my {relation} in my contacts."
    apps = ("contacts",)

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        row = contact_named(before, p["person"])
        return [Update("contacts", "contacts", row["id"], {"starred": True})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        contact = yield from self.who(p, observe)
        yield call("contacts.star", id=contact["id"], starred=True)
        yield finish()


class SharePhotoRelation(_Relation):
    name = "mem_share_photo_relation"
    test_only = True
    goal_template = "Send my {relation} the photo {photo}."
    apps = ("contacts", "files", "messages")

    def extra(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"photo": f"IMG_{rng.randint(1000, 9999)}.jpg"}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        state = self.people_state(p, rng)
        base = p["photo"][:-4]
        files = [{"id": rid(rng, "f"), "path": f"/sdcard/Camera/{name}", "name": name,
                  "kind": "photo", "album": "Camera", "tags": [], "size_kb": 1800,
                  "created_at": f"2025-12-{20 + i:02d}T10:00"}
                 for i, name in enumerate((p["photo"], f"{base}_edit.jpg", f"{base}1.jpg"))]
        return {**state, "files": {"files": files}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        phone = contact_named(before, p["person"])["phone"]
        return [Add("messages", "messages", {"phone": phone, "direction": "out",
                                             "body": f"[file] {p['photo']}"})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        contact = yield from self.who(p, observe)
        yield call("files.search", query=p["photo"])
        file_id = row_where(rows_of(observe()), name=p["photo"])["id"]
        yield call("files.share", id=file_id, contact=contact["name"])
        yield finish()


class InviteRelation(_Relation):
    name = "mem_invite_relation"
    goal_template = "Add my {relation} to the guest list of my '{title}' event."
    apps = ("contacts", "calendar")
    pools = person_pools(title=TITLES)

    def extra(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"title": TITLES.pick(rng, split), "date": f"2026-01-{rng.randint(12, 28):02d}"}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        state = self.people_state(p, rng)
        events = [{"id": rid(rng, "ev"), "title": p["title"], "start": f"{p['date']}T15:00",
                   "end": f"{p['date']}T16:00", "location": "", "attendees": [p["others"][0]],
                   "notes": ""},
                  {"id": rid(rng, "ev"), "title": f"{p['title']} (draft)",
                   "start": f"{p['date']}T09:00", "end": f"{p['date']}T09:30", "location": "",
                   "attendees": [], "notes": ""}]
        return {**state, "calendar": {"events": events}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        event = next(r for r in before.rows("calendar", "events") if r["title"] == p["title"])
        return [Update("calendar", "events", event["id"],
                       {"attendees": [*event["attendees"], p["person"]]})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        contact = yield from self.who(p, observe)
        yield call("calendar.search", query=p["title"])
        event = row_where(rows_of(observe()), title=p["title"])
        yield call("calendar.update_event", id=event["id"],
                   attendees=[*event["attendees"], contact["name"]])
        yield finish()


class ReplyRelationEmail(_Relation):
    name = "mem_reply_relation_email"
    test_only = True
    goal_template = "Reply to my {relation}'s latest email: \"{phrase}\"."
    apps = ("contacts", "email")
    pools = person_pools(phrase=PHRASES)

    def extra(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"phrase": PHRASES.pick(rng, split), "subjects": SUBJECTS.sample(rng, split, 3)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        state = self.people_state(p, rng)
        by_name = {c["name"]: c["email"] for c in state["contacts"]["contacts"]}
        # The relation's older and latest emails, and a newer one from their namesake.
        emails = [{"id": rid(rng, "em"), "folder": "inbox", "sender": by_name[sender],
                   "to": ["me@example.com"], "subject": subject, "body": "See attached.",
                   "received_at": when, "read": False, "starred": False}
                  for sender, subject, when in (
                      (p["person"], p["subjects"][0], "2025-12-22T09:11"),
                      (p["person"], p["subjects"][1], "2025-12-29T09:10"),
                      (p["namesake"], p["subjects"][2], "2025-12-30T08:00"))]
        rng.shuffle(emails)
        return {**state, "email": {"emails": emails}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        address = contact_named(before, p["person"])["email"]
        return [Add("email", "emails", {"folder": "sent", "to": [address],
                                         "body": ("~", p["phrase"])})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        contact = yield from self.who(p, observe)
        address = contact["email"]
        yield call("email.search", query=address)
        mails = [r for r in rows_of(observe()) if r.get("sender") == address]
        latest = max(mails, key=lambda r: r["received_at"])
        yield call("email.reply", id=latest["id"], body=p["phrase"])
        yield finish()


class HomeCheckout(_Memory):
    name = "mem_home_checkout"
    goal_template = "Check out my cart and have it delivered to my home."
    apps = ("shopping",)
    pools = MappingProxyType({"street": STREETS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        home, work, old = STREETS.sample(rng, split, 3)
        return {"street": home, "work": work, "old": old, "product": PRODUCTS.pick(rng, split)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        pid = rid(rng, "pr")
        return {"memory": {"home_address": p["street"], "work_address": p["work"],
                           "note/2025-11-02": f"Moved out of {p['old']} today."},
                "shopping": {"products": [{"id": pid, "name": p["product"], "category": "grocery",
                                           "price": 4.5, "stock": 30}],
                             "cart": [{"id": rid(rng, "ci"), "product_id": pid, "quantity": 2}]}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Add("shopping", "orders", {"address": p["street"], "status": "placed"}),
                Allow("shopping", "cart", kinds=("removed",)),
                Allow("shopping", "products", kinds=("changed",), fields=("stock",))]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield MemoryRead(query="home address")
        yield call("shopping.checkout", address=memory_value(observe(), "home_address"))
        yield finish()


class UsualOrder(_Memory):
    name = "mem_usual_order"
    goal_template = "Put my usual order from {store} in the cart."
    apps = ("shopping",)
    pools = MappingProxyType({"product": PRODUCTS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        product, other = PRODUCTS.sample(rng, split, 2)
        store, other_store = rng.sample(("the corner shop", "the farm stand", "the pharmacy",
                                         "the bakery", "the hardware store"), 2)
        return {"store": store, "product": product, "quantity": rng.randint(2, 5),
                "other_store": other_store, "other": other}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        slug = p["store"].removeprefix("the ").replace(" ", "_")
        other_slug = p["other_store"].removeprefix("the ").replace(" ", "_")
        products = [{"id": rid(rng, "pr"), "name": name, "category": "grocery",
                     "price": round(rng.uniform(2, 12), 2), "stock": 40}
                    for name in (p["product"], f"{p['product']} (family size)", p["other"])]
        return {"memory": {f"usual_order_{slug}": f"{p['quantity']} x {p['product']}",
                           f"usual_order_{other_slug}": f"{p['quantity'] + 1} x {p['other']}"},
                "shopping": {"products": products}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        pid = next(r["id"] for r in before.rows("shopping", "products")
                   if r["name"] == p["product"])
        return [Add("shopping", "cart", {"product_id": pid, "quantity": p["quantity"]})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        slug = p["store"].removeprefix("the ").replace(" ", "_")
        yield MemoryRead(key=f"usual_order_{slug}")
        quantity, product = parse_count(memory_value(observe()))
        yield call("shopping.search", query=product)
        pid = row_where(rows_of(observe()), name=product)["id"]
        yield call("shopping.add_to_cart", product_id=pid, quantity=quantity)
        yield finish()


class _Alarm(_Memory):
    apps = ("clock",)
    pools = MappingProxyType({"time": TIMES})
    days: tuple[str, ...]
    key: str
    other_key: str

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        time, other = TIMES.sample(rng, split, 2)
        return {"time": time, "other": other, "_nap": rng.randrange(13 * 60, 16 * 60, 5)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        nap = f"{p['_nap'] // 60:02d}:{p['_nap'] % 60:02d}"
        return {"memory": {self.key: p["time"], self.other_key: p["other"],
                           "nap_alarm_time": nap}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Add("clock", "alarms", {"time": p["time"], "days": list(self.days),
                                        "enabled": True})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield MemoryRead(query="wake")
        yield call("clock.set_alarm", time=memory_value(observe(), self.key), label="Wake up",
                   days=list(self.days))
        yield finish()


class WeekdayAlarm(_Alarm):
    name = "mem_weekday_alarm"
    goal_template = "Set my usual wake-up alarm for workdays."
    days = WEEKDAYS
    key, other_key = "weekday_wake_time", "weekend_wake_time"


class WeekendAlarm(_Alarm):
    name = "mem_weekend_alarm"
    test_only = True
    goal_template = "Set my usual lie-in alarm for Saturdays and Sundays."
    days = ("sat", "sun")
    key, other_key = "weekend_wake_time", "weekday_wake_time"


class LockerCode(_Memory):
    name = "mem_locker_code"
    checker = "state_and_answer"
    goal_template = "What's the code of my {place} locker? Only the code."
    pools = MappingProxyType({"code": CODES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        code, *others = CODES.sample(rng, split, 3)
        place, *other_places = rng.sample(("gym", "office", "pool", "station"), 3)
        return {"place": place, "code": code, "others": others, "other_places": other_places}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        memory = {f"{place}_locker_code": code for place, code in
                  zip(p["other_places"], p["others"], strict=True)}
        memory[f"{p['place']}_locker_code"] = p["code"]
        memory[f"note/old_{p['place']}_locker"] = f"old {p['place']} locker code was {p['others'][0]}"
        return {"memory": dict(sorted(memory.items()))}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [AnswerIs(p["code"])]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield MemoryRead(query=f"{p['place']} locker code")
        yield finish(memory_value(observe(), f"{p['place']}_locker_code"))


class LatestParking(_Memory):
    name = "mem_latest_parking"
    checker = "state_and_answer"
    goal_template = "Which parking spot did I leave the car in most recently? Just the spot."
    pools = MappingProxyType({"code": CODES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        codes = CODES.sample(rng, split, 3)
        spots = [f"{rng.choice('ABCDEF')}-{code}" for code in codes]
        days = sorted(rng.sample(range(10, 29), 3))
        return {"spot": spots[-1], "code": codes[-1], "spots": spots, "days": days}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        notes = {f"note/2025-12-{day:02d}": f"Parked on level {i + 1}, spot {spot}."
                 for i, (day, spot) in enumerate(zip(p["days"], p["spots"], strict=True))}
        items = list(notes.items())
        rng.shuffle(items)
        return {"memory": {**dict(items), "car_plate": "KX-4471"}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [AnswerIs(p["spot"])]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield MemoryRead(query="parked spot")
        hits = observe().result.value
        latest = max((k for k in hits if k.startswith("note/")), default=None)
        if latest is None:
            raise LookupError("memory shows no parking notes")
        yield finish(hits[latest].rsplit("spot ", 1)[1].rstrip("."))


class PreferredTimer(_Memory):
    name = "mem_preferred_timer"
    test_only = True
    goal_template = "Start a timer for my {thing}, the way I like it."
    apps = ("clock",)

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        things = rng.sample(("tea", "eggs", "pasta", "rice", "stretching", "face mask"), 3)
        minutes = rng.sample(range(3, 21), 3)
        return {"thing": things[0], "minutes": minutes[0], "things": things, "all": minutes}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"memory": {f"{t.replace(' ', '_')}_minutes": m
                           for t, m in zip(p["things"], p["all"], strict=True)}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Add("clock", "timers", {"seconds": p["minutes"] * 60})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        key = f"{p['thing'].replace(' ', '_')}_minutes"
        yield MemoryRead(query=p["thing"])
        minutes = int(memory_value(observe(), key))
        yield call("clock.start_timer", seconds=minutes * 60, label=p["thing"].capitalize())
        yield finish()


class PreferredBrightness(_Memory):
    name = "mem_preferred_brightness"
    goal_template = "Set the screen the way I like it {when}."
    pools = MappingProxyType({"level": LEVELS})
    apps = ("settings",)

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        when, other = rng.sample(("at night", "in the morning", "when reading"), 2)
        level, other_level = LEVELS.sample(rng, split, 2)
        return {"when": when, "level": level, "other": other, "other_level": other_level,
                "_volume": rng.randint(1, 7), "_brightness": rng.randrange(20, 50)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        def key(when: str) -> str:
            return f"brightness_{when.split()[-1]}"
        return {"memory": {key(p["when"]): p["level"], key(p["other"]): p["other_level"]},
                "settings": {"volume_ring": p["_volume"], "brightness": p["_brightness"]}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Setting("brightness", p["level"])]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        key = f"brightness_{p['when'].split()[-1]}"
        yield MemoryRead(key=key)
        yield call("settings.set", key="brightness", value=int(memory_value(observe(), key)))
        yield finish()


class NavigateToProvider(_Memory):
    name = "mem_navigate_provider"
    goal_template = "Take me to my {role} by {mode}."
    apps = ("maps",)
    pools = MappingProxyType({"place": PLACES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        place, other = PLACES.sample(rng, split, 2)
        role, other_role = rng.sample(("dentist", "physio", "vet", "barber", "tailor"), 2)
        return {"role": role, "place": place, "mode": rng.choice(["drive", "walk", "transit"]),
                "other_role": other_role, "other": other}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        places = [{"id": rid(rng, "pl"), "name": name, "category": "service",
                   "address": f"{rng.randint(2, 300)} {street}", "rating": round(rng.uniform(3.5, 5), 1)}
                  for name, street in ((p["place"], "High Street"),
                                       (f"{p['place']} Annex", "Station Road"),
                                       (p["other"], "Mill Lane"))]
        return {"memory": {f"my_{p['role']}": p["place"], f"my_{p['other_role']}": p["other"],
                           f"note/previous_{p['role']}": f"{p['place']} Annex (closed)"},
                "maps": {"places": places}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Add("maps", "trips", {"destination": p["place"], "mode": p["mode"]})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield MemoryRead(key=f"my_{p['role']}")
        place = memory_value(observe())
        yield call("maps.search_places", query=place)
        yield call("maps.navigate", destination=row_where(rows_of(observe()), name=place)["id"],
                   mode=p["mode"])
        yield finish()


class SaveSenderAsRole(_Memory):
    name = "mem_save_sender_role"
    goal_template = ("Whoever texted me about the {topic} is my new {role}. Remember that for "
                     "next time.")
    apps = ("messages", "contacts")
    pools = MappingProxyType({"topic": TOPICS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        world = World(rng, split)
        topic, other_topic = TOPICS.sample(rng, split, 2)
        person = world.person()
        return {"topic": topic, "role": rng.choice(("plumber", "electrician", "gardener", "tutor")),
                "person": person, "namesake": world.person(person.split()[0]),
                "other_topic": other_topic}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        world = World(rng, "train")
        a, b = world.contact(p["person"]), world.contact(p["namesake"])
        messages = [{"id": rid(rng, "msg"), "contact": c["name"], "phone": c["phone"],
                     "direction": "in", "body": f"Hi, about the {topic}: I can come on Monday.",
                     "sent_at": f"2025-12-{day}T10:00", "read": True}
                    for c, topic, day in ((a, p["topic"], 20), (b, p["other_topic"], 21))]
        return {"contacts": {"contacts": [a, b]}, "messages": {"messages": messages},
                "memory": {"handyman": "Olu Baptiste"}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        from devices.suite.diff import MemoryWritten

        # The entry holds the sender, not a list that also names the namesake.
        return [MemoryWritten((p["role"], p["person"]), excluded=(p["namesake"],))]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("messages.search", query=p["topic"])
        sender = next(r["contact"] for r in rows_of(observe()) if r.get("direction") == "in")
        yield MemoryWrite(key=p["role"], value=sender)
        yield finish()


class SaveCodeFromText(_Memory):
    name = "mem_save_code_from_text"
    goal_template = "{first} texted me the new {what} code. Keep it in your memory."
    apps = ("messages",)
    pools = MappingProxyType({"code": CODES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        world = World(rng, split)
        person = world.person()
        code, old, other = CODES.sample(rng, split, 3)
        return {"first": person.split()[0], "person": person, "what": rng.choice(
            ("gate", "door", "bike shed", "garage")), "code": code, "old": old, "other": other,
            "stranger": world.person()}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        rows = [(p["person"], f"Old {p['what']} code was {p['old']}, don't use it.", 12),
                (p["person"], f"New {p['what']} code: {p['code']}", 27),
                (p["stranger"], f"My {p['what']} code is {p['other']}", 28)]
        messages = [{"id": rid(rng, "msg"), "contact": who, "phone": f"+1-555-0300-00{i:02d}",
                     "direction": "in", "body": body, "sent_at": f"2025-12-{day}T18:00",
                     "read": True} for i, (who, body, day) in enumerate(rows)]
        return {"messages": {"messages": messages}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        from devices.suite.diff import MemoryWritten

        # The entry holds the new code alone, not a dump of every message (the old code, a
        # stranger's code).
        return [MemoryWritten((p["code"],), excluded=(p["old"], p["other"]))]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("messages.search", query=f"new {p['what']} code")
        body = next(r["body"] for r in rows_of(observe())
                    if r.get("contact", "").startswith(p["first"] + " "))
        yield MemoryWrite(key=f"{p['what'].replace(' ', '_')}_code", value=body.rsplit(" ", 1)[1])
        yield finish()


class ForgetOldAddress(_Memory):
    name = "mem_forget_old_address"
    goal_template = "I don't live at my previous flat any more. Forget that address."
    pools = MappingProxyType({"street": STREETS})

    # The old address's key is drawn per instance, so no fixed key forgets it blind (one issue
    # measured `memory_write("previous_home_address", null)` solving every instance).
    # None shares a word with the goal but "address", so matching keys to the goal's words ties
    # with home_address and work_address instead of finding it.
    OLD_KEYS = ("old_address", "prior_address", "past_address", "old_home_address", "prior_home_address")

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        old, home, work = STREETS.sample(rng, split, 3)
        return {"street": old, "home": home, "work": work, "_moved": rng.randint(1, 28),
                "_key": rng.choice(self.OLD_KEYS)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"memory": {"home_address": p["home"], "work_address": p["work"],
                           p["_key"]: p["street"],
                           f"note/2025-11-{p['_moved']:02d}": f"Moved into {p['home']}."}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        # Instances recorded before the key was drawn used the fixed one (`flywheel rescore`).
        return [MemoryForgotten(p.get("_key", "previous_home_address"))]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield MemoryRead(query="address")
        hits = observe().result.value  # the current home and work, and the one to forget
        key = next(k for k in hits if k not in ("home_address", "work_address") and not k.startswith("note/"))
        yield MemoryWrite(key=key, value=None)
        yield finish()


class UpdateWorkAddress(_Memory):
    name = "mem_update_work_address"
    test_only = True
    goal_template = "My office moved to {street}. Update what you remember about it."
    pools = MappingProxyType({"street": STREETS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        new, old, home = STREETS.sample(rng, split, 3)
        return {"street": new, "old": old, "home": home,
                "key": rng.choice(("work_address", "office_address", "office"))}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"memory": {p["key"]: p["old"], "home_address": p["home"],
                           "note/2025-10-01": f"Started at the office on {p['old']}."}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [MemoryUpdated(p["key"], p["street"])]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield MemoryRead(query="work office address")
        hits = observe().result.value
        key = next(k for k in hits if not k.startswith("note/") and k != "home_address")
        yield MemoryWrite(key=key, value=p["street"])
        yield finish()


class FollowUpFromNote(_Memory):
    name = "mem_follow_up_from_note"
    goal_template = ("Put the follow-up I agreed with {first} in my calendar: one hour, titled "
                     "'Follow-up with {first}'.")
    apps = ("calendar",)
    pools = MappingProxyType({"time": TIMES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        world = World(rng, split)
        person = world.person()
        time, other_time = TIMES.sample(rng, split, 2)
        topic, other_topic = TOPICS.sample(rng, split, 2)
        first = person.split()[0]
        other_first = rng.choice([f for f in FIRST.values(split) if f != first])
        return {"first": first, "person": person, "date": f"2026-01-{rng.randint(12, 23):02d}",
                "time": time, "topic": topic, "other_first": other_first,
                "other": world.person(other_first), "other_time": other_time,
                "other_topic": other_topic, "other_date": f"2026-01-{rng.randint(24, 30):02d}"}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"memory": {
            "note/2025-12-18": f"Agreed with {p['person']} to follow up on {p['date']} at "
                               f"{p['time']} about the {p['topic']}.",
            "note/2025-12-19": f"Agreed with {p['other']} to follow up on {p['other_date']} at "
                               f"{p['other_time']} about the {p['other_topic']}."}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        hour, minute = p["time"].split(":")
        return [Add("calendar", "events", {"title": f"Follow-up with {p['first']}",
                                           "start": f"{p['date']}T{p['time']}",
                                           "end": f"{p['date']}T{int(hour) + 1:02d}:{minute}"})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield MemoryRead(query=f"follow up {p['first']}")
        text = next(v for v in observe().result.value.values()
                    if f"with {p['first']} " in v)
        date, time = text.split(" on ", 1)[1].split(" about")[0].split(" at ")
        hour, minute = time.split(":")
        yield call("calendar.create_event", title=f"Follow-up with {p['first']}",
                   start=f"{date}T{time}", end=f"{date}T{int(hour) + 1:02d}:{minute}")
        yield finish()


class CancelGiftOrder(_Memory):
    name = "mem_cancel_gift_order"
    test_only = True
    goal_template = "Cancel the order I placed as a present for my {relation}."
    apps = ("shopping",)
    pools = MappingProxyType({"product": PRODUCTS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        product, other, third = PRODUCTS.sample(rng, split, 3)
        relation, other_relation = rng.sample(RELATIONS[:7], 2)
        return {"relation": relation, "product": product, "other": other, "third": third,
                "other_relation": other_relation}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        products = [{"id": rid(rng, "pr"), "name": n, "category": "gift", "price": 9.0,
                     "stock": 10} for n in (p["product"], p["other"], p["third"])]
        orders = [{"id": rid(rng, "or"), "items": [{"product_id": pr["id"], "quantity": 1}],
                   "total": 9.0, "address": "12 Home Street", "status": "placed"}
                  for pr in products]
        rng.shuffle(orders)
        return {"memory": {
            "note/2025-12-10": f"Ordered {p['product']} as a present for my {p['relation']}.",
            "note/2025-12-11": f"Ordered {p['other']} as a present for my {p['other_relation']}."},
            "shopping": {"products": products, "orders": orders}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        pid = next(r["id"] for r in before.rows("shopping", "products")
                   if r["name"] == p["product"])
        order = next(o for o in before.rows("shopping", "orders")
                     if o["items"][0]["product_id"] == pid)
        return [Update("shopping", "orders", order["id"], {"status": "cancelled"})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield MemoryRead(query=f"present {p['relation']}")
        note = next(v for v in observe().result.value.values()
                    if v.endswith(f"for my {p['relation']}."))
        product = note.removeprefix("Ordered ").split(" as a present")[0]
        yield call("shopping.search", query=product)
        pid = row_where(rows_of(observe()), name=product)["id"]
        yield call("shopping.list_orders")
        order = next(o for o in rows_of(observe()) if o["items"][0]["product_id"] == pid)
        yield call("shopping.cancel_order", order_id=order["id"])
        yield finish()


TEMPLATES = (TextRelation, EmailRelation, RelationPhone, StarRelation, SharePhotoRelation,
             InviteRelation, ReplyRelationEmail, HomeCheckout, UsualOrder, WeekdayAlarm,
             WeekendAlarm, LockerCode, LatestParking, PreferredTimer, PreferredBrightness,
             NavigateToProvider, SaveSenderAsRole, SaveCodeFromText, ForgetOldAddress,
             UpdateWorkAddress, FollowUpFromNote, CancelGiftOrder)

# (oracle actions, lookups) per template, measured by
# devices.suite.templates._profile.measure; the family tests re-measure them.
declare(TEMPLATES, {
    "mem_text_relation": (4, 3),
    "mem_email_relation": (4, 3),
    "mem_relation_phone": (4, 3),
    "mem_star_relation": (4, 3),
    "mem_share_photo_relation": (5, 4),
    "mem_invite_relation": (5, 4),
    "mem_reply_relation_email": (5, 4),
    "mem_home_checkout": (2, 1),
    "mem_usual_order": (3, 2),
    "mem_weekday_alarm": (2, 1),
    "mem_weekend_alarm": (2, 1),
    "mem_locker_code": (2, 1),
    "mem_latest_parking": (2, 1),
    "mem_preferred_timer": (2, 1),
    "mem_preferred_brightness": (2, 1),
    "mem_navigate_provider": (3, 2),
    "mem_save_sender_role": (2, 1),
    "mem_save_code_from_text": (2, 1),
    "mem_forget_old_address": (2, 1),
    "mem_update_work_address": (2, 1),
    "mem_follow_up_from_note": (2, 1),
    "mem_cancel_gift_order": (4, 3),
}, chains={  # independent lookups (neither decides the other) chain as one
    "mem_share_photo_relation": 3,
    "mem_invite_relation": 3,
    "mem_cancel_gift_order": 2,
})
