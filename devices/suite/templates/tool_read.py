"""Tool-use templates that look information up: the answer or the exact call is checked."""

from __future__ import annotations

import random
from types import MappingProxyType
from typing import Any

from devices.suite import checkers as ck
from devices.suite.pools import (
    COMPANIES,
    EMAIL_SUBJECTS,
    EVENT_TITLES,
    MINUTES,
    NOTE_TOPICS,
    PEOPLE,
    PLACES,
    PRODUCTS,
    TASK_DATES,
)
from devices.suite.template import Observe, OracleScript, Template
from devices.suite.templates._kit import (
    I,
    N,
    S,
    call,
    email_of,
    finish,
    params_schema,
    phone_number,
    result_value,
)
from schemas.actions import Answer

__all__ = ["TEMPLATES"]


def _looked_up(state: Any, *tools: str) -> bool:
    """The main agent made at least one successful call of one of `tools`."""
    return any(ck.calls(state, t) for t in tools)


class ContactPhone(Template):
    name = "contact_phone_lookup"
    family = "tool"
    checker = "state_and_answer"
    goal_template = "What is {person}'s phone number?"
    parameters = params_schema(person=S, phone=S)
    pools = MappingProxyType({"person": PEOPLE})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"person": PEOPLE.pick(rng, split), "phone": phone_number(rng)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        row = {"id": "ct_task1", "name": p["person"], "phone": p["phone"],
               "email": email_of(p["person"]), "company": "", "starred": False}
        return {"contacts": {"contacts": [row]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        if not ck.answer_has(state, p["phone"]):
            return 0.0
        return 1.0 if _looked_up(state, "contacts.search", "contacts.get") else 0.5

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("contacts.search", query=p["person"])
        rows = result_value(observe()) or []
        phone = next((r["phone"] for r in rows if r.get("name") == p["person"]), p["phone"])
        yield finish(f"{p['person']}'s number is {phone}.")


class SearchContactsByCompany(Template):
    name = "search_contacts_by_company"
    family = "tool"
    checker = "tool_call"
    goal_template = "Search my contacts for everyone who works at {company}."
    parameters = params_schema(company=S)
    pools = MappingProxyType({"company": COMPANIES})

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(ck.called(state, "contacts.search", {"query": p["company"]}))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("contacts.search", query=p["company"])
        yield finish()


class EventLocation(Template):
    name = "event_location_lookup"
    family = "tool"
    checker = "state_and_answer"
    goal_template = "Where is my '{title}' on {date}?"
    parameters = params_schema(title=S, date=S, place=S)
    pools = MappingProxyType({"title": EVENT_TITLES, "date": TASK_DATES, "place": PLACES})

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        hour = rng.randint(9, 16)
        row = {"id": "ev_task1", "title": p["title"], "start": f"{p['date']}T{hour:02d}:00",
               "end": f"{p['date']}T{hour + 1:02d}:00", "location": p["place"],
               "attendees": [], "notes": ""}
        return {"calendar": {"events": [row]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        if not ck.answer_has(state, p["place"]):
            return 0.0
        return 1.0 if _looked_up(state, "calendar.list_events", "calendar.search",
                                 "calendar.get_event") else 0.5

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("calendar.list_events", date=p["date"])
        rows = result_value(observe()) or []
        where = next((r["location"] for r in rows if r.get("title") == p["title"]), p["place"])
        yield finish(f"It is at {where}.")


class UnreadCount(Template):
    name = "unread_message_count"
    family = "tool"
    checker = "state_and_answer"
    goal_template = "How many unread text messages do I have from {person}?"
    parameters = params_schema(person=S, unread=I)
    pools = MappingProxyType({"person": PEOPLE})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"person": PEOPLE.pick(rng, split), "unread": rng.randint(2, 6)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        phone = phone_number(rng)
        msgs = [{"id": f"msg_task{i}", "contact": p["person"], "phone": phone, "direction": "in",
                 "body": f"Message {i + 1}", "sent_at": f"2025-12-30T{8 + i:02d}:00",
                 "read": i >= p["unread"]} for i in range(p["unread"] + 2)]
        contact = {"id": "ct_task1", "name": p["person"], "phone": phone, "email": "",
                   "company": "", "starred": False}
        return {"contacts": {"contacts": [contact]}, "messages": {"messages": msgs}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        if not ck.answer_has_number(state, p["unread"], 0):
            return 0.0
        return 1.0 if _looked_up(state, "messages.list", "messages.search") else 0.5

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("messages.list", contact=p["person"], unread=True)
        rows = result_value(observe()) or []
        yield finish(f"You have {len(rows)} unread messages from {p['person']}.")


class NoteSearch(Template):
    name = "search_notes"
    family = "tool"
    checker = "tool_call"
    goal_template = "Search my notes for '{topic}'."
    parameters = params_schema(topic=S)
    pools = MappingProxyType({"topic": NOTE_TOPICS})
    test_only = True

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        row = {"id": "nt_task1", "title": p["topic"], "body": "draft", "folder": "Personal",
               "pinned": False}
        return {"notes": {"notes": [row]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(ck.called(state, "notes.search", {"query": p["topic"]}))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("notes.search", query=p["topic"])
        yield finish()


class FreeSlot(Template):
    name = "find_free_slot"
    family = "tool"
    checker = "tool_call"
    goal_template = "Find me a free {minutes}-minute slot in my calendar on {date}."
    parameters = params_schema(minutes=I, date=S)
    pools = MappingProxyType({"minutes": MINUTES, "date": TASK_DATES})

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(ck.called(state, "calendar.find_free_slot",
                               {"date": p["date"], "duration_min": p["minutes"]}))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("calendar.find_free_slot", date=p["date"], duration_min=p["minutes"])
        slot = result_value(observe()) or {}
        yield finish(f"You are free from {slot.get('start')} to {slot.get('end')}.")


class EmailSender(Template):
    name = "email_sender_lookup"
    family = "tool"
    checker = "state_and_answer"
    goal_template = "Who sent me the email with the subject '{subject}'? Give me their address."
    parameters = params_schema(subject=S, person=S)
    pools = MappingProxyType({"subject": EMAIL_SUBJECTS, "person": PEOPLE})

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        row = {"id": "em_task1", "folder": "inbox", "sender": email_of(p["person"], "mail.test"),
               "to": ["me@example.com"], "subject": p["subject"], "body": "See attached.",
               "received_at": "2025-12-31T09:00", "read": False, "starred": False}
        return {"email": {"emails": [row]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        if not ck.answer_has(state, email_of(p["person"], "mail.test")):
            return 0.0
        return 1.0 if _looked_up(state, "email.search", "email.list", "email.read") else 0.5

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("email.search", query=p["subject"])
        rows = result_value(observe()) or []
        sender = next((r["sender"] for r in rows if r.get("subject") == p["subject"]), "")
        yield finish(f"It came from {sender}.")


class ProductPrice(Template):
    name = "product_price_lookup"
    family = "tool"
    checker = "state_and_answer"
    goal_template = "How much does the {product} cost in the shop?"
    parameters = params_schema(product=S, price=N)
    pools = MappingProxyType({"product": PRODUCTS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"product": PRODUCTS.pick(rng, split),
                "price": round(rng.randint(300, 9000) / 100, 2)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        row = {"id": "pr_task1", "name": p["product"], "category": "misc", "price": p["price"],
               "stock": 10}
        return {"shopping": {"products": [row]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        if not ck.answer_has_number(state, p["price"], 2):
            return 0.0
        return 1.0 if _looked_up(state, "shopping.search", "shopping.get_product") else 0.5

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("shopping.search", query=p["product"])
        rows = result_value(observe()) or []
        price = next((r["price"] for r in rows if r.get("name") == p["product"]), p["price"])
        yield finish(f"It costs {price:.2f}.")


class TravelTime(Template):
    name = "travel_time_query"
    family = "tool"
    checker = "tool_call"
    goal_template = "How long does it take to {mode} from {origin} to {destination}?"
    parameters = params_schema(origin=S, destination=S, mode=S)
    pools = MappingProxyType({"origin": PLACES, "destination": PLACES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        origin, destination = PLACES.sample(rng, split, 2)
        return {"origin": origin, "destination": destination,
                "mode": rng.choice(["drive", "walk", "transit"])}

    def goal(self, params: dict[str, Any]) -> str:
        verb = {"drive": "drive", "walk": "walk", "transit": "take transit"}[params["mode"]]
        return self.goal_template.format(**{**params, "mode": verb})

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(ck.called(state, "maps.eta", {"origin": p["origin"],
                                                   "destination": p["destination"],
                                                   "mode": p["mode"]}))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("maps.eta", origin=p["origin"], destination=p["destination"], mode=p["mode"])
        eta = (result_value(observe()) or {}).get("eta_min")
        yield Answer(text=f"About {eta} minutes.")
        yield finish(f"About {eta} minutes.")


class PlaceAddress(Template):
    name = "place_address_lookup"
    family = "tool"
    checker = "state_and_answer"
    goal_template = "What's the address of {place}?"
    parameters = params_schema(place=S, address=S)
    pools = MappingProxyType({"place": PLACES})
    test_only = True

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"place": PLACES.pick(rng, split),
                "address": f"{rng.randint(2, 400)} {rng.choice(['Tern', 'Quill', 'Osprey'])} Lane"}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        row = {"id": "pl_task1", "name": p["place"], "category": "shop", "address": p["address"],
               "rating": 4.2}
        return {"maps": {"places": [row]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        if not ck.answer_has(state, p["address"]):
            return 0.0
        return 1.0 if _looked_up(state, "maps.search_places", "maps.get_place") else 0.5

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("maps.search_places", query=p["place"])
        rows = result_value(observe()) or []
        address = next((r["address"] for r in rows if r.get("name") == p["place"]), "")
        yield finish(f"{p['place']} is at {address}.")


TEMPLATES = (ContactPhone, SearchContactsByCompany, EventLocation, UnreadCount, NoteSearch,
             FreeSlot, EmailSender, ProductPrice, TravelTime, PlaceAddress)

