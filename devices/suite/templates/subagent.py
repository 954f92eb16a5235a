"""Sub-agent templates: parts delegated to the right sub-agents and their results merged."""

from __future__ import annotations

import random
from types import MappingProxyType
from typing import Any

from devices.suite import checkers as ck
from devices.suite.pools import (
    ALBUMS,
    CODES,
    EMAIL_SUBJECTS,
    EVENT_TITLES,
    NOTE_TOPICS,
    PEOPLE,
    PHRASES,
    PLACES,
    PRODUCTS,
    STREETS,
    TASK_DATES,
    TIMES,
)
from devices.suite.template import Observe, OracleScript, Template
from devices.suite.templates._kit import I, N, S, email_of, finish, params_schema, phone_number
from devices.suite.templates.tool_write import (
    contact_row,
    photo_name,
    photo_row,
    place_row,
    product_row,
)
from schemas.actions import Delegate

__all__ = ["TEMPLATES"]

# The merged outcome (final state or answer) is worth half; the delegated parts share the rest.
_MERGE_WEIGHT = 0.5


def delegate(agent: str, instruction: str, *calls: tuple[str, dict[str, Any]]) -> Delegate:
    return Delegate(agent=agent, instruction=instruction,
                    arguments={"tool_calls": [{"name": n, "arguments": a} for n, a in calls]})


def delegated_values(observe: Observe) -> list[Any]:
    """The values of each call a sub-agent made (None for a failed call)."""
    result = observe().result
    if result is None or not isinstance(result.value, dict):
        return []
    return [r.get("value") if r.get("ok") else None for r in result.value.get("results", [])]


def collaboration(state: Any, parts: list[tuple[str, str, dict[str, Any]]], merged: bool) -> float:
    """Credit for each (agent, tool, args) part done by that sub-agent, plus the merged outcome."""
    share = (1.0 - _MERGE_WEIGHT) / len(parts)
    return ck.partial([(share, ck.delegated_call(state, a, t, args)) for a, t, args in parts]
                      + [(_MERGE_WEIGHT, merged)])


def _first(rows: Any, key: str, name: str) -> dict[str, Any]:
    for row in rows or []:
        if isinstance(row, dict) and row.get(key) == name:
            return row
    return {}


class TextPlaceAddress(Template):
    name = "team_text_place_address"
    family = "subagent"
    checker = "collaboration"
    goal_template = ("Have the navigator look up {place}, then have the communicator text "
                     "{person} its address.")
    parameters = params_schema(place=S, person=S, address=S, phone=S)
    pools = MappingProxyType({"place": PLACES, "person": PEOPLE})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"place": PLACES.pick(rng, split), "person": PEOPLE.pick(rng, split),
                "address": f"{rng.randint(2, 300)} Kiln Street", "phone": phone_number(rng)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"maps": {"places": [place_row(p["place"], address=p["address"])]},
                "contacts": {"contacts": [contact_row(p["person"], p["phone"])]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        merged = bool(ck.find_rows(state, "messages", "messages", phone=p["phone"],
                                   direction="out", body=("~", p["address"])))
        return collaboration(state, [("navigator", "maps.search_places", {"query": p["place"]}),
                                     ("communicator", "messages.send", {"contact": p["person"]})],
                             merged)

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield delegate("navigator", f"Find {p['place']}.",
                       ("maps.search_places", {"query": p["place"]}))
        found = delegated_values(observe)
        address = _first(found[0] if found else [], "name", p["place"]).get("address", p["address"])
        yield delegate("communicator", f"Text {p['person']} the address.",
                       ("messages.send", {"contact": p["person"],
                                          "body": f"{p['place']} is at {address}."}))
        yield finish()


class MeetingAndEmail(Template):
    name = "team_meeting_and_email"
    family = "subagent"
    checker = "collaboration"
    goal_template = ("Ask the scheduler to book '{title}' on {date} {start}-{end} and the "
                     "communicator to email {address} about it (subject '{title}').")
    parameters = params_schema(title=S, date=S, start=S, end=S, address=S, person=S)
    pools = MappingProxyType({"title": EVENT_TITLES, "date": TASK_DATES, "person": PEOPLE})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        hour = rng.randint(9, 16)
        person = PEOPLE.pick(rng, split)
        return {"title": EVENT_TITLES.pick(rng, split), "date": TASK_DATES.pick(rng, split),
                "start": f"{hour:02d}:00", "end": f"{hour:02d}:45", "person": person,
                "address": email_of(person, "team.test")}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {}

    def _event(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"title": p["title"], "start": f"{p['date']}T{p['start']}",
                "end": f"{p['date']}T{p['end']}"}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        merged = bool(ck.find_rows(state, "calendar", "events", **self._event(p))) and bool(
            ck.find_rows(state, "email", "emails", folder="sent", to=[p["address"]],
                         subject=p["title"]))
        return collaboration(state, [
            ("scheduler", "calendar.create_event", self._event(p)),
            ("communicator", "email.send", {"to": [p["address"]], "subject": p["title"]})], merged)

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield delegate("scheduler", "Book the meeting.", ("calendar.create_event", self._event(p)))
        yield delegate("communicator", "Email the invitee.",
                       ("email.send", {"to": [p["address"]], "subject": p["title"],
                                       "body": f"See you on {p['date']} at {p['start']}."}))
        yield finish()


class OrderAndNotify(Template):
    name = "team_order_and_notify"
    family = "subagent"
    checker = "collaboration"
    goal_template = ("Get the shopper to order {quantity} × {product} to {street}, then have the "
                     "communicator text {person} that the {product} is ordered.")
    parameters = params_schema(product=S, quantity=I, street=S, person=S, phone=S)
    pools = MappingProxyType({"product": PRODUCTS, "street": STREETS, "person": PEOPLE})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"product": PRODUCTS.pick(rng, split), "quantity": rng.randint(1, 3),
                "street": STREETS.pick(rng, split), "person": PEOPLE.pick(rng, split),
                "phone": phone_number(rng)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"shopping": {"products": [product_row(p["product"])]},
                "contacts": {"contacts": [contact_row(p["person"], p["phone"])]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        ordered = any(o.get("address") == p["street"] and
                      {"product_id": "pr_task1", "quantity": p["quantity"]} in o.get("items", [])
                      for o in ck.rows(state, "shopping", "orders"))
        told = bool(ck.find_rows(state, "messages", "messages", phone=p["phone"],
                                 direction="out", body=("~", p["product"])))
        return collaboration(state, [
            ("shopper", "shopping.checkout", {"address": p["street"]}),
            ("communicator", "messages.send", {"contact": p["person"]})], ordered and told)

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield delegate("shopper", f"Order {p['product']}.",
                       ("shopping.search", {"query": p["product"]}),
                       ("shopping.add_to_cart", {"product_id": "pr_task1",
                                                 "quantity": p["quantity"]}),
                       ("shopping.checkout", {"address": p["street"]}))
        yield delegate("communicator", "Tell them.",
                       ("messages.send", {"contact": p["person"],
                                          "body": f"The {p['product']} is ordered."}))
        yield finish()


class VisitWithAddress(Template):
    name = "team_visit_with_address"
    family = "subagent"
    checker = "collaboration"
    goal_template = ("Have the navigator find {place}; then have the scheduler add 'Visit "
                     "{place}' on {date} at {time} for an hour, with the place's address as "
                     "the location.")
    parameters = params_schema(place=S, date=S, time=S, address=S)
    pools = MappingProxyType({"place": PLACES, "date": TASK_DATES, "time": TIMES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        time = TIMES.pick(rng, split)
        while int(time[:2]) >= 22:
            time = TIMES.pick(rng, split)
        return {"place": PLACES.pick(rng, split), "date": TASK_DATES.pick(rng, split),
                "time": time, "address": f"{rng.randint(2, 300)} Flint Avenue"}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"maps": {"places": [place_row(p["place"], address=p["address"])]}}

    def _end(self, p: dict[str, Any]) -> str:
        return f"{p['date']}T{int(p['time'][:2]) + 1:02d}:{p['time'][3:]}"

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        start = f"{p['date']}T{p['time']}"
        merged = bool(ck.find_rows(state, "calendar", "events", title=f"Visit {p['place']}",
                                   start=start, location=p["address"]))
        return collaboration(state, [
            ("navigator", "maps.search_places", {"query": p["place"]}),
            ("scheduler", "calendar.create_event", {"start": start, "location": p["address"]})],
            merged)

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield delegate("navigator", f"Find {p['place']}.",
                       ("maps.search_places", {"query": p["place"]}))
        found = delegated_values(observe)
        address = _first(found[0] if found else [], "name", p["place"]).get("address", p["address"])
        yield delegate("scheduler", "Add the visit.",
                       ("calendar.create_event", {"title": f"Visit {p['place']}",
                                                  "start": f"{p['date']}T{p['time']}",
                                                  "end": self._end(p), "location": address}))
        yield finish()


class QuietEvening(Template):
    name = "team_quiet_evening"
    family = "subagent"
    checker = "collaboration"
    goal_template = ("Have the device admin turn on do not disturb and the scheduler set a "
                     "'{label}' alarm at {time}.")
    parameters = params_schema(time=S, label=S)
    pools = MappingProxyType({"time": TIMES, "label": NOTE_TOPICS})

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"settings": {"do_not_disturb": False}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        merged = state.settings.get("do_not_disturb") is True and bool(
            ck.find_rows(state, "clock", "alarms", time=p["time"], label=p["label"]))
        return collaboration(state, [
            ("device_admin", "settings.set", {"key": "do_not_disturb", "value": True}),
            ("scheduler", "clock.set_alarm", {"time": p["time"], "label": p["label"]})], merged)

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield delegate("device_admin", "Silence the phone.",
                       ("settings.set", {"key": "do_not_disturb", "value": True}))
        yield delegate("scheduler", "Set the alarm.",
                       ("clock.set_alarm", {"time": p["time"], "label": p["label"]}))
        yield finish()


class PriceAndRating(Template):
    name = "team_price_and_rating"
    family = "subagent"
    checker = "collaboration"
    goal_template = ("Ask the shopper for the price of the {product} and the navigator for the "
                     "rating of {place}, then tell me both.")
    parameters = params_schema(product=S, place=S, price=N, rating=N)
    pools = MappingProxyType({"product": PRODUCTS, "place": PLACES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"product": PRODUCTS.pick(rng, split), "place": PLACES.pick(rng, split),
                "price": round(rng.randint(500, 9900) / 100, 2),
                "rating": round(rng.randint(31, 49) / 10, 1)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"shopping": {"products": [product_row(p["product"], price=p["price"])]},
                "maps": {"places": [place_row(p["place"], rating=p["rating"])]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        merged = (ck.answer_has_number(state, p["price"], 2)
                  and ck.answer_has_number(state, p["rating"], 1))
        return collaboration(state, [
            ("shopper", "shopping.search", {"query": p["product"]}),
            ("navigator", "maps.search_places", {"query": p["place"]})], merged)

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield delegate("shopper", "Price?", ("shopping.search", {"query": p["product"]}))
        found = delegated_values(observe)
        price = _first(found[0] if found else [], "name", p["product"]).get("price", p["price"])
        yield delegate("navigator", "Rating?", ("maps.search_places", {"query": p["place"]}))
        found = delegated_values(observe)
        rating = _first(found[0] if found else [], "name", p["place"]).get("rating", p["rating"])
        yield finish(f"The {p['product']} costs {price:.2f}; {p['place']} is rated {rating:.1f}.")


class OrganiseAndTell(Template):
    name = "team_organise_and_tell"
    family = "subagent"
    checker = "collaboration"
    goal_template = ("Have the librarian move the photo {file} into the '{album}' album and the "
                     "communicator text {person} \"{phrase}\".")
    parameters = params_schema(file=S, album=S, person=S, phrase=S, phone=S)
    pools = MappingProxyType({"album": ALBUMS, "person": PEOPLE, "phrase": PHRASES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"file": photo_name(rng), "album": ALBUMS.pick(rng, split),
                "person": PEOPLE.pick(rng, split), "phrase": PHRASES.pick(rng, split),
                "phone": phone_number(rng)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"files": {"files": [photo_row(p["file"])]},
                "contacts": {"contacts": [contact_row(p["person"], p["phone"])]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        merged = bool(ck.find_rows(state, "files", "files", id="f_task1", album=p["album"])) and \
            bool(ck.find_rows(state, "messages", "messages", phone=p["phone"], direction="out",
                              body=("~", p["phrase"])))
        return collaboration(state, [
            ("librarian", "files.move", {"id": "f_task1", "album": p["album"]}),
            ("communicator", "messages.send", {"contact": p["person"]})], merged)

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield delegate("librarian", "File the photo.", ("files.search", {"query": p["file"]}),
                       ("files.move", {"id": "f_task1", "album": p["album"]}))
        yield delegate("communicator", "Send the text.",
                       ("messages.send", {"contact": p["person"], "body": p["phrase"]}))
        yield finish()


class EmailCodeToNote(Template):
    name = "team_email_code_to_note"
    family = "subagent"
    checker = "collaboration"
    goal_template = ("Have the communicator find the email '{subject}' and the librarian save "
                     "the confirmation code from it in a note titled '{subject} code'.")
    parameters = params_schema(subject=S, code=S)
    pools = MappingProxyType({"subject": EMAIL_SUBJECTS, "code": CODES})
    test_only = True

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        row = {"id": "em_task1", "folder": "inbox", "sender": "noreply@service.test",
               "to": ["me@example.com"], "subject": p["subject"],
               "body": f"Your confirmation code is {p['code']}.",
               "received_at": "2025-12-30T12:00", "read": False, "starred": False}
        return {"email": {"emails": [row]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        merged = bool(ck.find_rows(state, "notes", "notes", title=f"{p['subject']} code",
                                   body=("~", p["code"])))
        return collaboration(state, [
            ("communicator", "email.search", {"query": p["subject"]}),
            ("librarian", "notes.create", {"title": f"{p['subject']} code"})], merged)

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield delegate("communicator", "Find the email.", ("email.search", {"query": p["subject"]}))
        found = delegated_values(observe)
        body = _first(found[0] if found else [], "subject", p["subject"]).get("body", "")
        code = body.rsplit(" ", 1)[-1].rstrip(".") or p["code"]
        yield delegate("librarian", "Save the code.",
                       ("notes.create", {"title": f"{p['subject']} code", "body": code}))
        yield finish()


class LookupAndEmail(Template):
    name = "team_lookup_and_email"
    family = "subagent"
    checker = "collaboration"
    goal_template = ("Have the scheduler look up {person}'s email address in my contacts and the "
                     "communicator email them with the subject '{subject}'.")
    parameters = params_schema(person=S, subject=S, phone=S)
    pools = MappingProxyType({"person": PEOPLE, "subject": EMAIL_SUBJECTS})
    test_only = True

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"person": PEOPLE.pick(rng, split), "subject": EMAIL_SUBJECTS.pick(rng, split),
                "phone": phone_number(rng)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"contacts": {"contacts": [contact_row(p["person"], p["phone"])]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        address = email_of(p["person"])
        merged = bool(ck.find_rows(state, "email", "emails", folder="sent", to=[address],
                                   subject=p["subject"]))
        return collaboration(state, [
            ("scheduler", "contacts.search", {"query": p["person"]}),
            ("communicator", "email.send", {"to": [address], "subject": p["subject"]})], merged)

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield delegate("scheduler", "Look up the address.",
                       ("contacts.search", {"query": p["person"]}))
        found = delegated_values(observe)
        address = _first(found[0] if found else [], "name", p["person"]).get(
            "email", email_of(p["person"]))
        yield delegate("communicator", "Send the email.",
                       ("email.send", {"to": [address], "subject": p["subject"],
                                       "body": "Hello!"}))
        yield finish()


TEMPLATES = (TextPlaceAddress, MeetingAndEmail, OrderAndNotify, VisitWithAddress, QuietEvening,
             PriceAndRating, OrganiseAndTell, EmailCodeToNote, LookupAndEmail)
