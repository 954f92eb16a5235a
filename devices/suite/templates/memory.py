"""Memory templates: facts from earlier sessions recalled later, and facts saved for later."""

from __future__ import annotations

import random
from types import MappingProxyType
from typing import Any

from devices.suite import checkers as ck
from devices.suite.pools import (
    CODES,
    EMAIL_SUBJECTS,
    PEOPLE,
    PHRASES,
    PLACES,
    PRODUCTS,
    STREETS,
    TASK_DATES,
    TIMES,
)
from devices.suite.template import Observe, OracleScript, Template
from devices.suite.templates._kit import (
    I,
    S,
    call,
    email_of,
    finish,
    params_schema,
    phone_number,
    read_memory,
    result_value,
)
from devices.suite.templates.tool_write import contact_row, place_row, product_row
from schemas.actions import MemoryWrite

__all__ = ["TEMPLATES"]


def _read_key(state: Any, key: str) -> bool:
    """The agent read memory by `key`, or by a query that the key or its value contains."""
    value = ck.norm(f"{key} {state.memory.get(key, '')}")
    for entry in ck.memory_reads(state):
        args = entry.arguments or {}
        wanted = args.get("key") or args.get("query")
        if isinstance(wanted, str) and wanted.strip() and ck.norm(wanted) in value:
            return True
    return False


def _recalled(observe: Observe, fallback: Any) -> Any:
    """The value a memory read returned (the oracle's fallback keeps it robust to formats)."""
    value = result_value(observe())
    if isinstance(value, dict):
        value = value.get("value", next(iter(value.values()), None)) if value else None
    return fallback if value in (None, "", []) else value


class RecallLockerCode(Template):
    name = "recall_locker_code"
    family = "memory"
    checker = "state_and_answer"
    goal_template = "What's my gym locker code? I told you in an earlier chat."
    parameters = params_schema(code=S)
    pools = MappingProxyType({"code": CODES})

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"memory": {"gym_locker_code": p["code"], "favorite_color": "teal"}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        if not ck.answer_has(state, p["code"]):
            return 0.0
        return 1.0 if _read_key(state, "gym_locker_code") else 0.5

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield read_memory("gym_locker_code")
        yield finish(f"Your locker code is {_recalled(observe, p['code'])}.")


class RecallPartnerText(Template):
    name = "recall_partner_and_text"
    family = "memory"
    checker = "final_state"
    goal_template = "Text my partner: \"{phrase}\"."
    parameters = params_schema(person=S, phrase=S, phone=S)
    pools = MappingProxyType({"person": PEOPLE, "phrase": PHRASES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"person": PEOPLE.pick(rng, split), "phrase": PHRASES.pick(rng, split),
                "phone": phone_number(rng)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"memory": {"partner": p["person"]},
                "contacts": {"contacts": [contact_row(p["person"], p["phone"])]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(bool(ck.find_rows(state, "messages", "messages", phone=p["phone"],
                                       direction="out", body=("~", p["phrase"]))))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield read_memory("partner")
        yield call("messages.send", contact=_recalled(observe, p["person"]), body=p["phrase"])
        yield finish()


class RememberParking(Template):
    name = "remember_parking_spot"
    family = "memory"
    checker = "final_state"
    goal_template = "Remember for later that I parked in spot {code} on level {level}."
    parameters = params_schema(code=S, level=I)
    pools = MappingProxyType({"code": CODES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"code": CODES.pick(rng, split), "level": rng.randint(1, 6)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"memory": {"parking_spot": "old spot 12 on level 9"}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(ck.memory_has(state, p["code"], f"level {p['level']}"))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield MemoryWrite(key="parking_spot", value=f"spot {p['code']} on level {p['level']}")
        yield finish()


class TranscriptToMemory(Template):
    name = "save_wifi_password_from_notes"
    family = "memory"
    checker = "final_state"
    goal_template = ("Last week I put the Wi-Fi password for {place} in a note. Save it to your "
                     "memory under 'wifi_{slug}' so you can tell me later.")
    parameters = params_schema(place=S, slug=S, password=S)
    pools = MappingProxyType({"place": PLACES, "password": CODES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        place = PLACES.pick(rng, split)
        code = CODES.pick(rng, split)
        return {"place": place, "slug": place.split()[0].lower(), "password": code}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        note = {"id": "nt_task1", "title": f"Wi-Fi at {p['place']}",
                "body": f"network {p['slug']}-guest, password {p['password']}",
                "folder": "Personal", "pinned": False}
        return {"notes": {"notes": [note]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        value = state.memory.get(f"wifi_{p['slug']}")
        return float(value is not None and ck.norm(p["password"]) in ck.norm(str(value)))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("notes.search", query=p["place"])
        rows = result_value(observe()) or []
        body = next((r["body"] for r in rows if r.get("id") == "nt_task1"), "")
        password = body.rsplit("password", 1)[-1].strip() or p["password"]
        yield MemoryWrite(key=f"wifi_{p['slug']}", value=password)
        yield finish()


class RecallDentistNavigate(Template):
    name = "recall_dentist_and_navigate"
    family = "memory"
    checker = "tool_call"
    goal_template = "Take me to my dentist by {mode}."
    parameters = params_schema(place=S, mode=S)
    pools = MappingProxyType({"place": PLACES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"place": PLACES.pick(rng, split), "mode": rng.choice(["drive", "transit"])}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"memory": {"my_dentist": p["place"]},
                "maps": {"places": [place_row(p["place"])]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(any(ck.values_match(a.get("destination"), p["place"])
                         or ck.values_match(a.get("destination"), "pl_task1")
                         for a in (e.arguments for e in ck.calls(state, "maps.navigate"))
                         if ck.values_match(a.get("mode"), p["mode"])))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield read_memory("my_dentist")
        yield call("maps.navigate", destination=_recalled(observe, p["place"]), mode=p["mode"])
        yield finish()


class RecallWakeTime(Template):
    name = "recall_usual_wake_time"
    family = "memory"
    checker = "final_state"
    goal_template = "Set my usual weekday wake-up alarm, Monday to Friday."
    parameters = params_schema(time=S)
    pools = MappingProxyType({"time": TIMES})

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"memory": {"weekday_wake_time": p["time"]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(bool(ck.find_rows(state, "clock", "alarms", time=p["time"], enabled=True,
                                       days=["mon", "tue", "wed", "thu", "fri"])))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield read_memory("weekday_wake_time")
        yield call("clock.set_alarm", time=_recalled(observe, p["time"]), label="Wake up",
                   days=["mon", "tue", "wed", "thu", "fri"])
        yield finish()


class RecallUsualOrder(Template):
    name = "recall_usual_order"
    family = "memory"
    checker = "final_state"
    goal_template = "Add my usual order to the cart, {quantity} of them."
    parameters = params_schema(product=S, quantity=I)
    pools = MappingProxyType({"product": PRODUCTS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"product": PRODUCTS.pick(rng, split), "quantity": rng.randint(2, 4)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"memory": {"usual_order": p["product"]},
                "shopping": {"products": [product_row(p["product"])]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(bool(ck.find_rows(state, "shopping", "cart", product_id="pr_task1",
                                       quantity=p["quantity"])))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield read_memory("usual_order")
        yield call("shopping.search", query=_recalled(observe, p["product"]))
        rows = result_value(observe()) or []
        pid = next((r["id"] for r in rows if r.get("name") == p["product"]), "pr_task1")
        yield call("shopping.add_to_cart", product_id=pid, quantity=p["quantity"])
        yield finish()


class RecallBirthday(Template):
    name = "recall_birthday_to_calendar"
    family = "memory"
    checker = "final_state"
    goal_template = "Put {person}'s birthday in my calendar as an all-morning event (09:00-12:00)."
    parameters = params_schema(person=S, date=S)
    pools = MappingProxyType({"person": PEOPLE, "date": TASK_DATES})
    test_only = True

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        first = p["person"].split()[0].lower()
        return {"memory": {f"birthday_{first}": p["date"], "birthday_mum": "2026-04-02"}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(any(
            ck.norm(p["person"].split()[0]) in ck.norm(r.get("title", ""))
            and "birthday" in ck.norm(r.get("title", ""))
            for r in ck.find_rows(state, "calendar", "events", start=f"{p['date']}T09:00",
                                  end=f"{p['date']}T12:00")))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        first = p["person"].split()[0]
        yield read_memory(f"birthday_{first.lower()}")
        date = _recalled(observe, p["date"])
        yield call("calendar.create_event", title=f"{first}'s birthday", start=f"{date}T09:00",
                   end=f"{date}T12:00")
        yield finish()


class RecallAccountantEmail(Template):
    name = "recall_accountant_email"
    family = "memory"
    checker = "final_state"
    goal_template = "Email my accountant with the subject '{subject}' saying \"{phrase}\"."
    parameters = params_schema(person=S, subject=S, phrase=S)
    pools = MappingProxyType({"person": PEOPLE, "subject": EMAIL_SUBJECTS, "phrase": PHRASES})
    test_only = True

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"memory": {"accountant_email": email_of(p["person"], "tax.test")}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(bool(ck.find_rows(state, "email", "emails", folder="sent",
                                       to=[email_of(p["person"], "tax.test")],
                                       subject=p["subject"], body=("~", p["phrase"]))))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield read_memory("accountant_email")
        address = _recalled(observe, email_of(p["person"], "tax.test"))
        yield call("email.send", to=[address], subject=p["subject"], body=p["phrase"])
        yield finish()


class UpdateNumberFromTranscript(Template):
    name = "update_number_from_earlier_text"
    family = "memory"
    checker = "final_state"
    goal_template = "{person} texted me a new number last week. Update their contact with it."
    parameters = params_schema(person=S, old=S, new=S)
    pools = MappingProxyType({"person": PEOPLE})
    test_only = True

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"person": PEOPLE.pick(rng, split), "old": phone_number(rng),
                "new": phone_number(rng)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        msg = {"id": "msg_task1", "contact": p["person"], "phone": p["old"], "direction": "in",
               "body": f"Hi! My new number is {p['new']}, please save it.",
               "sent_at": "2025-12-27T18:00", "read": True}
        return {"contacts": {"contacts": [contact_row(p["person"], p["old"])]},
                "messages": {"messages": [msg]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(bool(ck.find_rows(state, "contacts", "contacts", id="ct_task1",
                                       phone=p["new"])))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("messages.search", query="new number")
        rows = result_value(observe()) or []
        body = next((r["body"] for r in rows if r.get("contact") == p["person"]), "")
        number = body.split("is ", 1)[-1].split(",", 1)[0].strip() if body else p["new"]
        yield call("contacts.update", id="ct_task1", phone=number)
        yield finish()


class RecallHomeAddressOrder(Template):
    name = "recall_home_address_checkout"
    family = "memory"
    checker = "final_state"
    goal_template = "Check out my cart and ship it to my home address."
    parameters = params_schema(street=S, product=S)
    pools = MappingProxyType({"street": STREETS, "product": PRODUCTS})

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"memory": {"home_address": p["street"], "work_address": "1 Office Plaza"},
                "shopping": {"products": [product_row(p["product"])],
                             "cart": [{"id": "ci_task1", "product_id": "pr_task1",
                                       "quantity": 1}]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(bool(ck.find_rows(state, "shopping", "orders", address=p["street"])))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield read_memory("home_address")
        yield call("shopping.checkout", address=_recalled(observe, p["street"]))
        yield finish()


TEMPLATES = (RecallLockerCode, RecallPartnerText, RememberParking, TranscriptToMemory,
             RecallDentistNavigate, RecallWakeTime, RecallUsualOrder, RecallBirthday,
             RecallAccountantEmail, UpdateNumberFromTranscript, RecallHomeAddressOrder)
