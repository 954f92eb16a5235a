"""Skill templates: the right skill from devices/sim/skills.py is chosen, its steps run, the state is right."""

from __future__ import annotations

import random
from types import MappingProxyType
from typing import Any

from devices.suite import checkers as ck
from devices.suite.pools import (
    EVENT_TITLES,
    MINUTES,
    NOTE_TOPICS,
    PEOPLE,
    PHRASES,
    PLACES,
    PRODUCTS,
    SETTING_LEVELS,
    STREETS,
    TAGS,
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
)
from devices.suite.templates.tool_write import (
    contact_row,
    photo_name,
    photo_row,
    place_row,
    product_row,
)
from schemas.actions import UseSkill

__all__ = ["TEMPLATES"]

# Half the credit for routing to the right skill with the right arguments (steps all ran),
# half for the resulting state; a right state reached without the skill earns only its half.
_ROUTING_WEIGHT = 0.5


def _skill_score(state: Any, skill: str, args: dict[str, Any], state_ok: bool) -> float:
    return ck.partial([(_ROUTING_WEIGHT, ck.skill_ran(state, skill, args)),
                       (1.0 - _ROUTING_WEIGHT, state_ok)])


class _SkillTemplate(Template):
    """A template solved by one skill call; subclasses give the skill, its args and the state check."""

    family = "skills"
    checker = "skill"
    skill: str

    def skill_args(self, p: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def state_ok(self, state: Any, p: dict[str, Any]) -> bool:
        raise NotImplementedError

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {}

    def is_successful(self, state: Any, p: dict[str, Any]) -> float:
        return _skill_score(state, self.skill, self.routing_args(p), self.state_ok(state, p))

    def routing_args(self, p: dict[str, Any]) -> dict[str, Any]:
        """The arguments the checker requires of the skill call (default: all of them)."""
        return self.skill_args(p)

    def lookups(self, p: dict[str, Any]) -> list[Any]:
        """Tool calls the expert makes before choosing the skill (finding ids)."""
        return []

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield from self.lookups(p)
        yield UseSkill(skill=self.skill, arguments=self.skill_args(p))
        yield finish()


class ScheduleMeeting(_SkillTemplate):
    name = "skill_schedule_meeting"
    skill = "schedule_meeting"
    goal_template = ("Set up '{title}' with {person} on {date} from {start} to {end} and send "
                     "them the invitation by text.")
    parameters = params_schema(title=S, person=S, date=S, start=S, end=S, phone=S)
    pools = MappingProxyType({"title": EVENT_TITLES, "person": PEOPLE, "date": TASK_DATES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        hour = rng.randint(9, 16)
        return {"title": EVENT_TITLES.pick(rng, split), "person": PEOPLE.pick(rng, split),
                "date": TASK_DATES.pick(rng, split), "start": f"{hour:02d}:00",
                "end": f"{hour + 1:02d}:00", "phone": phone_number(rng)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"contacts": {"contacts": [contact_row(p["person"], p["phone"])]}}

    def skill_args(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"title": p["title"], "start": f"{p['date']}T{p['start']}",
                "end": f"{p['date']}T{p['end']}", "contact": p["person"]}

    def state_ok(self, state: Any, p: dict[str, Any]) -> bool:
        event = ck.find_rows(state, "calendar", "events", title=p["title"],
                             start=f"{p['date']}T{p['start']}")
        text = ck.find_rows(state, "messages", "messages", phone=p["phone"], direction="out",
                            body=("~", p["title"]))
        return bool(event and text)


class Bedtime(_SkillTemplate):
    name = "skill_bedtime"
    skill = "bedtime_mode"
    goal_template = "Get the phone ready for the night, dim the screen to {level}% and wake me at {time}."
    parameters = params_schema(time=S, level=S)
    pools = MappingProxyType({"time": TIMES, "level": SETTING_LEVELS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"time": TIMES.pick(rng, split), "level": SETTING_LEVELS.pick(rng, split)}

    def skill_args(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"wake_time": p["time"], "brightness": int(p["level"])}

    def state_ok(self, state: Any, p: dict[str, Any]) -> bool:
        s = state.settings
        return (s.get("do_not_disturb") is True and s.get("dark_mode") is True
                and s.get("brightness") == int(p["level"])
                and bool(ck.find_rows(state, "clock", "alarms", time=p["time"], enabled=True)))


class BedtimeDefault(_SkillTemplate):
    name = "skill_bedtime_default"
    skill = "bedtime_mode"
    goal_template = "I'm off to sleep: put the phone in night mode and wake me at {time}."
    parameters = params_schema(time=S)
    pools = MappingProxyType({"time": TIMES})
    test_only = True

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"time": TIMES.pick(rng, split)}

    def skill_args(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"wake_time": p["time"]}

    def state_ok(self, state: Any, p: dict[str, Any]) -> bool:
        s = state.settings
        return (s.get("do_not_disturb") is True and s.get("dark_mode") is True
                and bool(ck.find_rows(state, "clock", "alarms", time=p["time"], enabled=True)))


class SharePhoto(_SkillTemplate):
    name = "skill_share_photo"
    skill = "share_photo"
    goal_template = "Tag the photo {file} as '{tag}' and share it with {person}."
    parameters = params_schema(file=S, tag=S, person=S, phone=S)
    pools = MappingProxyType({"tag": TAGS, "person": PEOPLE})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"file": photo_name(rng), "tag": TAGS.pick(rng, split),
                "person": PEOPLE.pick(rng, split), "phone": phone_number(rng)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"files": {"files": [photo_row(p["file"])]},
                "contacts": {"contacts": [contact_row(p["person"], p["phone"])]}}

    def lookups(self, p: dict[str, Any]) -> list[Any]:
        return [call("files.search", query=p["file"])]

    def skill_args(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"file_id": "f_task1", "contact": p["person"], "tag": p["tag"]}

    def state_ok(self, state: Any, p: dict[str, Any]) -> bool:
        photo = ck.find_rows(state, "files", "files", id="f_task1")
        tagged = bool(photo) and any(ck.values_match(t, p["tag"]) for t in photo[0]["tags"])
        sent = ck.find_rows(state, "messages", "messages", phone=p["phone"], direction="out",
                            body=("~", p["file"]))
        return tagged and bool(sent)


class SendPhoto(_SkillTemplate):
    name = "skill_send_photo"
    skill = "share_photo"
    goal_template = "Send {person} the photo {file}."
    parameters = params_schema(file=S, person=S, phone=S)
    pools = MappingProxyType({"person": PEOPLE})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"file": photo_name(rng), "person": PEOPLE.pick(rng, split),
                "phone": phone_number(rng)}

    initial_state = SharePhoto.initial_state
    lookups = SharePhoto.lookups

    def skill_args(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"file_id": "f_task1", "contact": p["person"]}

    def state_ok(self, state: Any, p: dict[str, Any]) -> bool:
        return bool(ck.find_rows(state, "messages", "messages", phone=p["phone"],
                                 direction="out", body=("~", p["file"])))


class QuickReorder(_SkillTemplate):
    name = "skill_quick_reorder"
    skill = "quick_reorder"
    goal_template = "Order {quantity} × {product} and have it delivered to {street}."
    parameters = params_schema(product=S, quantity=I, street=S)
    pools = MappingProxyType({"product": PRODUCTS, "street": STREETS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"product": PRODUCTS.pick(rng, split), "quantity": rng.randint(2, 4),
                "street": STREETS.pick(rng, split)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"shopping": {"products": [product_row(p["product"])]}}

    def lookups(self, p: dict[str, Any]) -> list[Any]:
        return [call("shopping.search", query=p["product"])]

    def skill_args(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"product_id": "pr_task1", "quantity": p["quantity"], "address": p["street"]}

    def state_ok(self, state: Any, p: dict[str, Any]) -> bool:
        return any(o.get("address") == p["street"] and
                   {"product_id": "pr_task1", "quantity": p["quantity"]} in o.get("items", [])
                   for o in ck.rows(state, "shopping", "orders"))


class SaveAndGo(_SkillTemplate):
    name = "skill_save_and_go"
    skill = "save_and_go"
    goal_template = "Save {place} to my favourites and take me there by {mode}."
    parameters = params_schema(place=S, mode=S)
    pools = MappingProxyType({"place": PLACES})
    test_only = True

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"place": PLACES.pick(rng, split), "mode": rng.choice(["drive", "walk", "transit"])}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"maps": {"places": [place_row(p["place"])]}}

    def lookups(self, p: dict[str, Any]) -> list[Any]:
        return [call("maps.search_places", query=p["place"])]

    def skill_args(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"place_id": "pl_task1", "mode": p["mode"]}

    def state_ok(self, state: Any, p: dict[str, Any]) -> bool:
        saved = ck.find_rows(state, "maps", "saved", place_id="pl_task1", list="Favorites")
        trip = ck.find_rows(state, "maps", "trips", destination=p["place"], mode=p["mode"])
        return bool(saved and trip)


class NoteAndEmail(_SkillTemplate):
    name = "skill_note_and_email"
    skill = "note_and_email"
    goal_template = "Write a note '{topic}' saying \"{phrase}\" and email the same to {person}."
    parameters = params_schema(topic=S, phrase=S, person=S)
    pools = MappingProxyType({"topic": NOTE_TOPICS, "phrase": PHRASES, "person": PEOPLE})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"topic": NOTE_TOPICS.pick(rng, split), "phrase": PHRASES.pick(rng, split),
                "person": PEOPLE.pick(rng, split)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        row = contact_row(p["person"], phone_number(rng))
        return {"contacts": {"contacts": [row]}}

    def lookups(self, p: dict[str, Any]) -> list[Any]:
        return [call("contacts.search", query=p["person"])]

    def skill_args(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"title": p["topic"], "body": p["phrase"], "to": [email_of(p["person"])]}

    def state_ok(self, state: Any, p: dict[str, Any]) -> bool:
        note = ck.find_rows(state, "notes", "notes", title=p["topic"], body=("~", p["phrase"]))
        mail = ck.find_rows(state, "email", "emails", folder="sent", to=[email_of(p["person"])],
                            subject=p["topic"], body=("~", p["phrase"]))
        return bool(note and mail)


class FocusMode(_SkillTemplate):
    name = "skill_focus_mode"
    skill = "focus_mode"
    goal_template = "I need {minutes} minutes of deep work with no interruptions at all, not even the network."
    parameters = params_schema(minutes=I)
    pools = MappingProxyType({"minutes": MINUTES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"minutes": MINUTES.pick(rng, split)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"settings": {"do_not_disturb": False, "volume_ring": 5, "airplane_mode": False}}

    def skill_args(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"minutes": p["minutes"], "airplane": True}

    def state_ok(self, state: Any, p: dict[str, Any]) -> bool:
        s = state.settings
        timer = ck.find_rows(state, "clock", "timers", seconds=p["minutes"] * 60)
        return (s.get("do_not_disturb") is True and s.get("volume_ring") == 0
                and s.get("airplane_mode") is True and bool(timer))


TEMPLATES = (ScheduleMeeting, Bedtime, BedtimeDefault, SharePhoto, SendPhoto, QuickReorder,
             SaveAndGo, NoteAndEmail, FocusMode)

