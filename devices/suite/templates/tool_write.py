"""Tool-use templates that change the phone: the final state (or the exact call) is checked."""

from __future__ import annotations

import random
from types import MappingProxyType
from typing import Any

from devices.suite import checkers as ck
from devices.suite.pools import (
    ALARM_LABELS,
    ALBUMS,
    COMPANIES,
    DAYS,
    EMAIL_SUBJECTS,
    EVENT_TITLES,
    FOLDERS,
    MINUTES,
    NOTE_TOPICS,
    PEOPLE,
    PHRASES,
    PLACES,
    PRODUCTS,
    SETTING_LEVELS,
    SWITCHES,
    TAGS,
    TASK_DATES,
    TIMES,
)
from devices.suite.template import Observe, OracleScript, Template
from devices.suite.templates._kit import (
    I,
    L,
    S,
    call,
    email_of,
    finish,
    params_schema,
    phone_number,
)

__all__ = ["TEMPLATES", "contact_row", "photo_row", "place_row", "product_row"]


def contact_row(person: str, phone: str, row_id: str = "ct_task1", **extra: Any) -> dict[str, Any]:
    return {"id": row_id, "name": person, "phone": phone, "email": email_of(person),
            "company": "", "starred": False, **extra}


def place_row(place: str, row_id: str = "pl_task1", address: str = "9 Wren Lane",
              rating: float = 4.4) -> dict[str, Any]:
    return {"id": row_id, "name": place, "category": "place", "address": address,
            "rating": rating}


def product_row(product: str, row_id: str = "pr_task1", price: float = 19.5) -> dict[str, Any]:
    return {"id": row_id, "name": product, "category": "misc", "price": price, "stock": 50}


def photo_row(name: str, album: str = "Camera", row_id: str = "f_task1") -> dict[str, Any]:
    return {"id": row_id, "path": f"/sdcard/{album}/{name}", "name": name, "kind": "photo",
            "album": album, "tags": [], "size_kb": 2100, "created_at": "2025-12-30T10:00"}


def photo_name(rng: random.Random) -> str:
    return f"IMG_{rng.randint(2000, 9999)}.jpg"


class AddContact(Template):
    name = "add_contact"
    family = "tool"
    checker = "final_state"
    goal_template = "Add {person} from {company} to my contacts, phone number {phone}."
    parameters = params_schema(person=S, company=S, phone=S)
    pools = MappingProxyType({"person": PEOPLE, "company": COMPANIES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"person": PEOPLE.pick(rng, split), "company": COMPANIES.pick(rng, split),
                "phone": phone_number(rng)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(bool(ck.find_rows(state, "contacts", "contacts", name=p["person"],
                                       phone=p["phone"], company=p["company"])))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("contacts.add", name=p["person"], phone=p["phone"], company=p["company"])
        yield finish()


class SetAlarm(Template):
    name = "set_alarm"
    family = "tool"
    checker = "final_state"
    goal_template = "Set an alarm for {time} labelled '{label}' that repeats on {day_text}."
    parameters = params_schema(time=S, label=S, days=L, day_text=S)
    pools = MappingProxyType({"time": TIMES, "label": ALARM_LABELS, "days": DAYS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        days = list(DAYS.pick(rng, split))
        return {"time": TIMES.pick(rng, split), "label": ALARM_LABELS.pick(rng, split),
                "days": days, "day_text": ", ".join(days)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(bool(ck.find_rows(state, "clock", "alarms", time=p["time"], label=p["label"],
                                       days=p["days"], enabled=True)))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("clock.set_alarm", time=p["time"], label=p["label"], days=p["days"])
        yield finish()


class CreateEvent(Template):
    name = "create_event"
    family = "tool"
    checker = "final_state"
    goal_template = "Put '{title}' in my calendar on {date} from {start} to {end} at {place}."
    parameters = params_schema(title=S, date=S, start=S, end=S, place=S)
    pools = MappingProxyType({"title": EVENT_TITLES, "date": TASK_DATES, "place": PLACES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        hour = rng.randint(8, 17)
        return {"title": EVENT_TITLES.pick(rng, split), "date": TASK_DATES.pick(rng, split),
                "start": f"{hour:02d}:30", "end": f"{hour + 1:02d}:15",
                "place": PLACES.pick(rng, split)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(bool(ck.find_rows(
            state, "calendar", "events", title=p["title"], start=f"{p['date']}T{p['start']}",
            end=f"{p['date']}T{p['end']}", location=p["place"])))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("calendar.create_event", title=p["title"], start=f"{p['date']}T{p['start']}",
                   end=f"{p['date']}T{p['end']}", location=p["place"])
        yield finish()


class SendText(Template):
    name = "send_text_message"
    family = "tool"
    checker = "final_state"
    goal_template = "Text {person}: \"{phrase}\"."
    parameters = params_schema(person=S, phrase=S, phone=S)
    pools = MappingProxyType({"person": PEOPLE, "phrase": PHRASES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"person": PEOPLE.pick(rng, split), "phrase": PHRASES.pick(rng, split),
                "phone": phone_number(rng)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"contacts": {"contacts": [contact_row(p["person"], p["phone"])]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(bool(ck.find_rows(state, "messages", "messages", phone=p["phone"],
                                       direction="out", body=("~", p["phrase"]))))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("messages.send", contact=p["person"], body=p["phrase"])
        yield finish()


class CreateNote(Template):
    name = "create_note"
    family = "tool"
    checker = "final_state"
    goal_template = "Create a note called '{topic}' in my {folder} folder that says \"{phrase}\"."
    parameters = params_schema(topic=S, folder=S, phrase=S)
    pools = MappingProxyType({"topic": NOTE_TOPICS, "folder": FOLDERS, "phrase": PHRASES})

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(bool(ck.find_rows(state, "notes", "notes", title=p["topic"],
                                       folder=p["folder"], body=("~", p["phrase"]))))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("notes.create", title=p["topic"], body=p["phrase"], folder=p["folder"])
        yield finish()


class SwitchAndBrightness(Template):
    name = "switch_and_brightness"
    family = "tool"
    checker = "final_state"
    goal_template = "Turn {switch_text} on and set the screen brightness to {level}%."
    parameters = params_schema(switch=S, switch_text=S, level=S)
    pools = MappingProxyType({"switch": SWITCHES, "level": SETTING_LEVELS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        switch = SWITCHES.pick(rng, split)
        return {"switch": switch, "switch_text": switch.replace("_", " "),
                "level": SETTING_LEVELS.pick(rng, split)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"settings": {p["switch"]: False, "brightness": 70}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        s = state.settings
        return float(s.get(p["switch"]) is True and s.get("brightness") == int(p["level"]))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("settings.set", key=p["switch"], value=True)
        yield call("settings.set", key="brightness", value=int(p["level"]))
        yield finish()


class DeleteAlarm(Template):
    name = "delete_alarm"
    family = "tool"
    checker = "final_state"
    goal_template = "Delete my '{label}' alarm; keep the others."
    parameters = params_schema(label=S, time=S)
    pools = MappingProxyType({"label": ALARM_LABELS, "time": TIMES})

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        row = {"id": "al_task1", "time": p["time"], "label": p["label"], "enabled": True,
               "days": []}
        return {"clock": {"alarms": [row]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        alarms = ck.rows(state, "clock", "alarms")
        gone = not any(ck.values_match(a.get("label"), p["label"]) for a in alarms)
        kept = {a["id"] for a in alarms} >= {"al1", "al2", "al3"}
        return float(gone and kept)

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("clock.list_alarms")
        yield call("clock.delete_alarm", id="al_task1")
        yield finish()


class StartTimer(Template):
    name = "start_timer"
    family = "tool"
    checker = "tool_call"
    goal_template = "Start a {minutes}-minute timer called '{label}'."
    parameters = params_schema(minutes=I, label=S)
    pools = MappingProxyType({"minutes": MINUTES, "label": ALARM_LABELS})

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(ck.called(state, "clock.start_timer",
                               {"seconds": p["minutes"] * 60, "label": p["label"]}))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("clock.start_timer", seconds=p["minutes"] * 60, label=p["label"])
        yield finish()


class SendEmail(Template):
    name = "send_email"
    family = "tool"
    checker = "final_state"
    goal_template = "Email {address} with the subject '{subject}' and the text \"{phrase}\"."
    parameters = params_schema(address=S, subject=S, phrase=S, person=S)
    pools = MappingProxyType({"person": PEOPLE, "subject": EMAIL_SUBJECTS, "phrase": PHRASES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        person = PEOPLE.pick(rng, split)
        return {"person": person, "address": email_of(person, "corp.test"),
                "subject": EMAIL_SUBJECTS.pick(rng, split), "phrase": PHRASES.pick(rng, split)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(bool(ck.find_rows(state, "email", "emails", folder="sent", to=[p["address"]],
                                       subject=p["subject"], body=("~", p["phrase"]))))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("email.send", to=[p["address"]], subject=p["subject"], body=p["phrase"])
        yield finish()


class AddToCart(Template):
    name = "add_to_cart"
    family = "tool"
    checker = "final_state"
    goal_template = "Put {quantity} × {product} in my shopping cart."
    parameters = params_schema(product=S, quantity=I)
    pools = MappingProxyType({"product": PRODUCTS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"product": PRODUCTS.pick(rng, split), "quantity": rng.randint(2, 5)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"shopping": {"products": [product_row(p["product"])]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(bool(ck.find_rows(state, "shopping", "cart", product_id="pr_task1",
                                       quantity=p["quantity"])))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("shopping.search", query=p["product"])
        yield call("shopping.add_to_cart", product_id="pr_task1", quantity=p["quantity"])
        yield finish()


class SavePlace(Template):
    name = "save_place"
    family = "tool"
    checker = "final_state"
    goal_template = "Save {place} to my '{list}' list in maps."
    parameters = params_schema(place=S, list=S)
    pools = MappingProxyType({"place": PLACES, "list": FOLDERS})

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"maps": {"places": [place_row(p["place"])]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(bool(ck.find_rows(state, "maps", "saved", place_id="pl_task1",
                                       list=p["list"])))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("maps.search_places", query=p["place"])
        yield call("maps.save_place", place_id="pl_task1", list=p["list"])
        yield finish()


class TagPhoto(Template):
    name = "tag_photo"
    family = "tool"
    checker = "final_state"
    goal_template = "Tag the photo {file} as '{tag}'."
    parameters = params_schema(file=S, tag=S)
    pools = MappingProxyType({"tag": TAGS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"file": photo_name(rng), "tag": TAGS.pick(rng, split)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"files": {"files": [photo_row(p["file"])]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        rows = ck.find_rows(state, "files", "files", id="f_task1")
        return float(bool(rows) and any(ck.values_match(t, p["tag"]) for t in rows[0]["tags"]))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("files.search", query=p["file"])
        yield call("files.tag", id="f_task1", tag=p["tag"])
        yield finish()


class StarContact(Template):
    name = "star_contact"
    family = "tool"
    checker = "final_state"
    goal_template = "Star {person} in my contacts."
    parameters = params_schema(person=S, phone=S)
    pools = MappingProxyType({"person": PEOPLE})
    test_only = True

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"person": PEOPLE.pick(rng, split), "phone": phone_number(rng)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"contacts": {"contacts": [contact_row(p["person"], p["phone"])]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(bool(ck.find_rows(state, "contacts", "contacts", id="ct_task1",
                                       starred=True)))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("contacts.search", query=p["person"])
        yield call("contacts.star", id="ct_task1", starred=True)
        yield finish()


class ArchiveEmail(Template):
    name = "archive_email"
    family = "tool"
    checker = "final_state"
    goal_template = "Archive the email about '{subject}'."
    parameters = params_schema(subject=S)
    pools = MappingProxyType({"subject": EMAIL_SUBJECTS})
    test_only = True

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        row = {"id": "em_task1", "folder": "inbox", "sender": "office@corp.test",
               "to": ["me@example.com"], "subject": p["subject"], "body": "FYI.",
               "received_at": "2025-12-31T10:00", "read": True, "starred": False}
        return {"email": {"emails": [row]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(bool(ck.find_rows(state, "email", "emails", id="em_task1",
                                       folder="archive")))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("email.search", query=p["subject"])
        yield call("email.move", id="em_task1", folder="archive")
        yield finish()


class MovePhotoAlbum(Template):
    name = "move_photo_to_album"
    family = "tool"
    checker = "final_state"
    goal_template = "Move the photo {file} into my '{album}' album."
    parameters = params_schema(file=S, album=S)
    pools = MappingProxyType({"album": ALBUMS})
    test_only = True

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"file": photo_name(rng), "album": ALBUMS.pick(rng, split)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"files": {"files": [photo_row(p["file"])]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(bool(ck.find_rows(state, "files", "files", id="f_task1", album=p["album"])))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("files.search", query=p["file"])
        yield call("files.move", id="f_task1", album=p["album"])
        yield finish()


class UpdateContactCompany(Template):
    name = "update_contact_company"
    family = "tool"
    checker = "final_state"
    goal_template = "{person} now works at {company}; update their contact."
    parameters = params_schema(person=S, company=S, phone=S)
    pools = MappingProxyType({"person": PEOPLE, "company": COMPANIES})
    test_only = True

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"person": PEOPLE.pick(rng, split), "company": COMPANIES.pick(rng, split),
                "phone": phone_number(rng)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"contacts": {"contacts": [contact_row(p["person"], p["phone"],
                                                      company="Freelance")]}}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return float(bool(ck.find_rows(state, "contacts", "contacts", id="ct_task1",
                                       company=p["company"], phone=p["phone"])))

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("contacts.search", query=p["person"])
        yield call("contacts.update", id="ct_task1", company=p["company"])
        yield finish()


TEMPLATES = (AddContact, SetAlarm, CreateEvent, SendText, CreateNote, SwitchAndBrightness,
             DeleteAlarm, StartTimer, SendEmail, AddToCart, SavePlace, TagPhoto, StarContact,
             ArchiveEmail, MovePhotoAlbum, UpdateContactCompany)
