"""Skill templates: the right skill must be chosen among near-miss ones in the harness's library
(devices/harness/skills.py), with arguments found on the phone, and the state must change
exactly as that skill changes it.

Credit follows the choice the policy made: the expected skill must run successfully with the
expected arguments (`SkillUsed`), any other skill tried is a violation, and the whole state
change is compared with the expected one, so a near-miss skill's extra step (a text where an
email was asked, a navigation where only a bookmark was) fails the task.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from devices.suite.diff import Add, Allow, Expectation, Setting, SkillUsed, Update
from devices.suite.template import Observe, OracleScript, Template
from devices.suite.templates._hkit import (
    ALBUMS,
    CITIES,
    DIM_LEVELS,
    FOCUS_MINUTES,
    LEVELS,
    LISTS,
    NAP_MINUTES,
    PHRASES,
    PLACES,
    PRODUCTS,
    STREETS,
    SUBJECTS,
    SURNAMES,
    TAGS,
    TIMES,
    TITLES,
    TOPICS,
    World,
    derived_parameters,
    rid,
    row_where,
    rows_of,
)
from devices.suite.templates._kit import call, finish
from schemas.actions import UseSkill

__all__ = ["TEMPLATES"]

COMPANIES = ("Northwind", "Bluegate", "Copperline", "Driftwood Labs", "Elmstead")
MEETING_APPS = ("calendar", "contacts", "messages", "email")
DEVICE_APPS = ("settings", "clock")
NOTE_APPS = ("notes", "email", "messages", "contacts")


class _Skill(Template):
    """One skill call (after lookups) solves the task; subclasses give the skill's arguments,
    the state change and the lookups."""

    family = "skills"
    checker = "skill"
    tier = "medium"
    skill: ClassVar[str]

    @property
    def parameters(self) -> dict[str, Any]:  # type: ignore[override]
        return derived_parameters(self)

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {}

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        raise NotImplementedError

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        raise NotImplementedError

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [SkillUsed(self.skill, self.skill_args(p, before)), *self.changes(p, before)]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        raise NotImplementedError


# ---- contacts with namesakes, told apart by company --------------------------------------------

class _WithContact(_Skill):
    def people(self, rng: random.Random, split: Any) -> dict[str, Any]:
        world = World(rng, split)
        person = world.person()
        company, other_company = rng.sample(COMPANIES, 2)
        return {"person": person, "surname": person.split()[1], "first": person.split()[0],
                "company": company,
                "namesake": world.person(person.split()[0]), "other_company": other_company}

    def contacts(self, p: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
        world = World(rng, "train")
        rows = [world.contact(p["person"], company=p["company"]),
                world.contact(p["namesake"], company=p["other_company"])]
        rng.shuffle(rows)
        return rows

    @staticmethod
    def contact(before: Any, name: str) -> dict[str, Any]:
        return next(r for r in before.rows("contacts", "contacts") if r["name"] == name)

    @staticmethod
    def find(p: dict[str, Any], observe: Observe) -> Any:
        return row_where(rows_of(observe()), company=p["company"])


class _Meeting(_WithContact):
    apps = MEETING_APPS
    pools = MappingProxyType({"surname": SURNAMES, "title": TITLES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        hour = rng.randint(9, 16)
        return {**self.people(rng, split), "title": TITLES.pick(rng, split),
                "date": f"2026-01-{rng.randint(12, 28):02d}", "start": f"{hour:02d}:30",
                "end": f"{hour + 1:02d}:30"}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"contacts": {"contacts": self.contacts(p, rng)}}

    def span(self, p: dict[str, Any]) -> dict[str, str]:
        return {"title": p["title"], "start": f"{p['date']}T{p['start']}",
                "end": f"{p['date']}T{p['end']}"}


class ScheduleMeeting(_Meeting):
    name = "skill_schedule_meeting"
    skill = "schedule_meeting"
    goal_template = ("Set up '{title}' with {first} from {company} on {date}, {start}-{end}, and "
                     "text them the invitation.")

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {**self.span(p), "contact": p["person"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        phone = self.contact(before, p["person"])["phone"]
        return [Add("calendar", "events", {**self.span(p), "attendees": [p["person"]]}),
                Add("messages", "messages", {"phone": phone, "direction": "out",
                                             "body": ("~", p["title"])})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("contacts.search", query=p["first"])
        person = self.find(p, observe)["name"]
        yield UseSkill(skill=self.skill, arguments={**self.span(p), "contact": person})
        yield finish()


class MeetingByEmail(_Meeting):
    name = "skill_meeting_by_email"
    skill = "schedule_meeting_by_email"
    goal_template = ("Put '{title}' on {date}, {start}-{end}, in my calendar with {first} from "
                     "{company}, and email them the invitation.")

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {**self.span(p), "email": self.contact(before, p["person"])["email"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        email = self.contact(before, p["person"])["email"]
        return [Add("calendar", "events", {**self.span(p), "attendees": [email]}),
                Add("email", "emails", {"folder": "sent", "to": [email],
                                         "subject": f"Invitation: {p['title']}"})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("contacts.search", query=p["first"])
        email = self.find(p, observe)["email"]
        yield UseSkill(skill=self.skill, arguments={**self.span(p), "email": email})
        yield finish()


class BlockTime(_Meeting):
    name = "skill_block_time"
    skill = "block_time"
    tier = "easy"
    goal_template = ("Hold {date}, {start}-{end}, in my diary for '{title}'. It's just for me: "
                     "don't invite anyone.")

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return self.span(p)

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Add("calendar", "events", {**self.span(p), "attendees": []})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield UseSkill(skill=self.skill, arguments=self.span(p))
        yield finish()


# ---- device routines --------------------------------------------------------------------------

class _Device(_Skill):
    apps = DEVICE_APPS
    tier = "easy"
    start_settings: ClassVar[Mapping[str, Any]] = MappingProxyType({})

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"settings": {"volume_ring": p["_volume"], **self.start_settings}}

    def world(self, rng: random.Random) -> dict[str, Any]:
        """Private parameters that vary the phone each instance starts from."""
        return {"_volume": rng.randint(1, 7)}

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield UseSkill(skill=self.skill, arguments=self.skill_args(p, None))
        yield finish()


class Bedtime(_Device):
    name = "skill_bedtime"
    skill = "bedtime_mode"
    goal_template = "Get the phone ready for the night and wake me at {time}."
    pools = MappingProxyType({"time": TIMES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"time": TIMES.pick(rng, split), **self.world(rng)}

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"wake_time": p["time"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Setting("do_not_disturb", True), Setting("dark_mode", True),
                Add("clock", "alarms", {"time": p["time"], "label": "Wake up"})]


class BedtimeDimmed(Bedtime):
    name = "skill_bedtime_dimmed"
    goal_template = ("Night mode for the phone please, with the screen down to {level}%, and wake "
                     "me at {time}.")
    test_only = True
    pools = MappingProxyType({"time": TIMES, "level": DIM_LEVELS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"time": TIMES.pick(rng, split), "level": DIM_LEVELS.pick(rng, split),
                **self.world(rng)}

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"wake_time": p["time"], "brightness": p["level"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [*super().changes(p, before), Setting("brightness", p["level"])]


class Nap(_Device):
    name = "skill_nap"
    skill = "nap_mode"
    goal_template = "I'm having a {minutes}-minute nap. Keep the phone quiet until it's over."
    pools = MappingProxyType({"minutes": NAP_MINUTES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"minutes": NAP_MINUTES.pick(rng, split), **self.world(rng)}

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"minutes": p["minutes"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Setting("do_not_disturb", True),
                Add("clock", "timers", {"seconds": p["minutes"] * 60, "label": "Nap"})]


class Morning(_Device):
    name = "skill_morning"
    skill = "morning_mode"
    goal_template = "Good morning! Set the phone up for the day with the screen at {level}%."
    pools = MappingProxyType({"level": LEVELS})
    start_settings = MappingProxyType({"do_not_disturb": True, "dark_mode": True,
                                      "brightness": 10})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"level": LEVELS.pick(rng, split), **self.world(rng)}

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"brightness": p["level"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Setting("do_not_disturb", False), Setting("dark_mode", False),
                Setting("brightness", p["level"])]


class Focus(_Device):
    name = "skill_focus"
    skill = "focus_mode"
    goal_template = "I need {minutes} minutes of deep work. Silence the phone completely."
    pools = MappingProxyType({"minutes": FOCUS_MINUTES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"minutes": FOCUS_MINUTES.pick(rng, split), **self.world(rng)}

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"minutes": p["minutes"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Setting("do_not_disturb", True), Setting("volume_ring", 0),
                Add("clock", "timers", {"seconds": p["minutes"] * 60, "label": "Focus"})]


class MeetingMode(_Device):
    name = "skill_meeting_mode"
    skill = "meeting_mode"
    test_only = True
    goal_template = ("I'm walking into a {minutes}-minute meeting. Mute the ringer for it, but "
                     "leave do-not-disturb as it is.")

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"minutes": rng.choice((20, 30, 45, 60, 75)), **self.world(rng)}

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"minutes": p["minutes"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Setting("volume_ring", 0),
                Add("clock", "timers", {"seconds": p["minutes"] * 60, "label": "Meeting"})]


class Travel(_Device):
    name = "skill_travel"
    skill = "travel_mode"
    goal_template = "They're boarding my flight to {city}; get the phone ready for it."
    start_settings = MappingProxyType({"bluetooth": True})
    pools = MappingProxyType({"city": CITIES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"city": CITIES.pick(rng, split), **self.world(rng)}

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Setting("airplane_mode", True), Setting("bluetooth", False),
                Setting("battery_saver", True)]


class Landing(Travel):
    name = "skill_landing"
    skill = "landing_mode"
    goal_template = "Just touched down in {city}. Get the phone back to normal."
    start_settings = MappingProxyType({"airplane_mode": True, "wifi": False,
                                      "battery_saver": True, "bluetooth": False})
    test_only = True

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Setting("airplane_mode", False), Setting("wifi", True),
                Setting("battery_saver", False)]


class Privacy(Travel):
    name = "skill_privacy"
    skill = "privacy_mode"
    goal_template = ("I'm in {city} for a while: stop letting anything know where I am, and cut "
                     "the wireless headphones link.")

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Setting("location", False), Setting("bluetooth", False)]


# ---- photos -------------------------------------------------------------------------------------

class _Photo(_WithContact):
    apps = ("files", "contacts", "messages")
    tier = "hard"
    pools = MappingProxyType({"surname": SURNAMES, "album": ALBUMS, "tag": TAGS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        album, other_album = ALBUMS.sample(rng, split, 2)
        days = rng.sample(range(3, 28), 3)
        return {**self.people(rng, split), "album": album, "other_album": other_album,
                "tag": TAGS.pick(rng, split), "day": days[0], "days": days,
                "date": f"2025-12-{days[0]:02d}"}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        files = []
        for album, day in ((p["album"], p["days"][0]), (p["album"], p["days"][1]),
                           (p["other_album"], p["days"][0]), (p["other_album"], p["days"][2])):
            name = f"IMG_{rng.randint(1000, 9999)}.jpg"
            files.append({"id": rid(rng, "f"), "path": f"/sdcard/{album}/{name}", "name": name,
                          "kind": "photo", "album": album, "tags": [], "size_kb": 2400,
                          "created_at": f"2025-12-{day:02d}T11:00"})
        return {"files": {"files": files}, "contacts": {"contacts": self.contacts(p, rng)}}

    def photo(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return next(r for r in before.rows("files", "files") if r["album"] == p["album"]
                    and r["created_at"].startswith(p["date"]))

    def find_photo(self, p: dict[str, Any], observe: Observe) -> dict[str, Any]:
        return next(r for r in rows_of(observe()) if r["album"] == p["album"]
                    and r["created_at"].startswith(p["date"]))


class SharePhoto(_Photo):
    name = "skill_share_photo"
    skill = "share_photo"
    goal_template = ("Tag the {album} photo from {date} as '{tag}' and send it to {first} from "
                     "{company}.")

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"file_id": self.photo(p, before)["id"], "contact": p["person"], "tag": p["tag"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        photo = self.photo(p, before)
        phone = self.contact(before, p["person"])["phone"]
        return [Update("files", "files", photo["id"], {"tags": [p["tag"]]}),
                Add("messages", "messages", {"phone": phone, "body": f"[file] {photo['name']}"})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("files.search", query=p["album"])
        photo = self.find_photo(p, observe)
        yield call("contacts.search", query=p["first"])
        person = self.find(p, observe)["name"]
        yield UseSkill(skill=self.skill, arguments={"file_id": photo["id"], "contact": person,
                                                    "tag": p["tag"]})
        yield finish()


class ArchivePhoto(_Photo):
    name = "skill_archive_photo"
    skill = "archive_photo"
    goal_template = ("Tag the {album} photo from {date} as '{tag}' and move it to my "
                     "'{other_album}' album. Don't send it to anyone.")

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"file_id": self.photo(p, before)["id"], "album": p["other_album"],
                "tag": p["tag"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        photo = self.photo(p, before)
        return [Update("files", "files", photo["id"], {"tags": [p["tag"]],
                                                       "album": p["other_album"]},
                       free=("path",))]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("files.search", query=p["album"])
        photo = self.find_photo(p, observe)
        yield UseSkill(skill=self.skill, arguments={"file_id": photo["id"],
                                                    "album": p["other_album"], "tag": p["tag"]})
        yield finish()


# ---- shopping and places ------------------------------------------------------------------------

class _Cheaper(_Skill):
    apps = ("shopping",)
    pools = MappingProxyType({"product": PRODUCTS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"product": PRODUCTS.pick(rng, split), "quantity": rng.randint(2, 4),
                "street": STREETS.pick(rng, split), "cheap": round(rng.uniform(2, 6), 2),
                "dear": round(rng.uniform(7, 14), 2)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        rows = [{"id": rid(rng, "pr"), "name": p["product"], "category": "grocery",
                 "price": price, "stock": 25} for price in (p["dear"], p["cheap"])]
        rng.shuffle(rows)
        return {"shopping": {"products": rows}}

    def cheaper(self, p: dict[str, Any], before: Any) -> str:
        return next(r["id"] for r in before.rows("shopping", "products")
                    if r["name"] == p["product"] and r["price"] == p["cheap"])

    def find(self, p: dict[str, Any], observe: Observe) -> Any:
        yield call("shopping.search", query=p["product"])
        listings = [r for r in rows_of(observe()) if r["name"] == p["product"]]
        return min(listings, key=lambda r: r["price"])["id"]


class QuickReorder(_Cheaper):
    name = "skill_quick_reorder"
    skill = "quick_reorder"
    goal_template = ("Order {quantity} of whichever '{product}' listing is cheaper and ship them to "
                     "{street}.")

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"product_id": self.cheaper(p, before), "address": p["street"],
                "quantity": p["quantity"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        pid = self.cheaper(p, before)
        return [Add("shopping", "orders", {"address": p["street"], "items": [
                    {"product_id": pid, "quantity": p["quantity"]}]}),
                Allow("shopping", "products", ids=(pid,), kinds=("changed",), fields=("stock",))]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        pid = yield from self.find(p, observe)
        yield UseSkill(skill=self.skill, arguments={"product_id": pid, "address": p["street"],
                                                    "quantity": p["quantity"]})
        yield finish()


class StockUp(_Cheaper):
    name = "skill_stock_up"
    skill = "stock_up"
    goal_template = ("Put {quantity} of the cheaper '{product}' listing in my cart, but don't "
                     "order yet.")

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"product_id": self.cheaper(p, before), "quantity": p["quantity"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Add("shopping", "cart", {"product_id": self.cheaper(p, before),
                                         "quantity": p["quantity"]})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        pid = yield from self.find(p, observe)
        yield UseSkill(skill=self.skill, arguments={"product_id": pid,
                                                    "quantity": p["quantity"]})
        yield finish()


class _Place(_Skill):
    apps = ("maps",)
    pools = MappingProxyType({"place": PLACES, "list": LISTS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"place": PLACES.pick(rng, split), "list": LISTS.pick(rng, split),
                "mode": rng.choice(("drive", "walk", "transit"))}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        rows = [{"id": rid(rng, "pl"), "name": name, "category": "venue",
                 "address": f"{rng.randint(2, 200)} Market Street", "rating": rating}
                for name, rating in ((p["place"], 4.2), (f"{p['place']} Express", 4.6))]
        return {"maps": {"places": rows}}

    def place_id(self, p: dict[str, Any], before: Any) -> str:
        return next(r["id"] for r in before.rows("maps", "places") if r["name"] == p["place"])

    def find(self, p: dict[str, Any], observe: Observe) -> Any:
        yield call("maps.search_places", query=p["place"])
        return row_where(rows_of(observe()), name=p["place"])["id"]


class SaveAndGo(_Place):
    name = "skill_save_and_go"
    skill = "save_and_go"
    goal_template = "Save {place} to my '{list}' list and take me there by {mode}."

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"place_id": self.place_id(p, before), "mode": p["mode"], "list": p["list"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Add("maps", "saved", {"place_id": self.place_id(p, before), "list": p["list"]}),
                Add("maps", "trips", {"destination": p["place"], "mode": p["mode"]})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        pid = yield from self.find(p, observe)
        yield UseSkill(skill=self.skill, arguments={"place_id": pid, "mode": p["mode"],
                                                    "list": p["list"]})
        yield finish()


class Bookmark(_Place):
    name = "skill_bookmark_place"
    skill = "bookmark_place"
    goal_template = "Keep {place} on my '{list}' list for another day; no directions now."
    test_only = True

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"place_id": self.place_id(p, before), "list": p["list"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Add("maps", "saved", {"place_id": self.place_id(p, before), "list": p["list"]})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        pid = yield from self.find(p, observe)
        yield UseSkill(skill=self.skill, arguments={"place_id": pid, "list": p["list"]})
        yield finish()


# ---- notes and contacts ---------------------------------------------------------------------------

class _Note(_WithContact):
    apps = NOTE_APPS
    pools = MappingProxyType({"surname": SURNAMES, "title": SUBJECTS, "body": PHRASES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {**self.people(rng, split), "title": SUBJECTS.pick(rng, split),
                "body": PHRASES.pick(rng, split)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"contacts": {"contacts": self.contacts(p, rng)}}


class NoteAndEmail(_Note):
    name = "skill_note_and_email"
    skill = "note_and_email"
    goal_template = ("Write a note '{title}' saying \"{body}\" and email the same to {first} from "
                     "{company}.")

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"title": p["title"], "body": p["body"],
                "to": [self.contact(before, p["person"])["email"]]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        email = self.contact(before, p["person"])["email"]
        return [Add("notes", "notes", {"title": p["title"], "body": p["body"]}),
                Add("email", "emails", {"folder": "sent", "to": [email], "subject": p["title"]})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("contacts.search", query=p["first"])
        email = self.find(p, observe)["email"]
        yield UseSkill(skill=self.skill, arguments={"title": p["title"], "body": p["body"],
                                                    "to": [email]})
        yield finish()


class NoteAndText(_Note):
    name = "skill_note_and_text"
    skill = "note_and_text"
    goal_template = ("Jot down a note '{title}' saying \"{body}\" and text those words to {first} "
                     "from {company}.")

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"title": p["title"], "body": p["body"], "contact": p["person"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        phone = self.contact(before, p["person"])["phone"]
        return [Add("notes", "notes", {"title": p["title"], "body": p["body"]}),
                Add("messages", "messages", {"phone": phone, "body": p["body"]})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("contacts.search", query=p["first"])
        person = self.find(p, observe)["name"]
        yield UseSkill(skill=self.skill, arguments={"title": p["title"], "body": p["body"],
                                                    "contact": person})
        yield finish()


class _NewContact(_Skill):
    apps = ("contacts", "messages")
    tier = "easy"
    pools = MappingProxyType({"surname": SURNAMES, "message": PHRASES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        world = World(rng, split)
        name = world.person()
        return {"name": name, "surname": name.split()[1], "phone": world.phone(),
                "message": PHRASES.pick(rng, split)}


class Welcome(_NewContact):
    name = "skill_welcome_contact"
    skill = "welcome_contact"
    goal_template = ("Add {name} ({phone}) to my favourite contacts and text them "
                     "\"{message}\".")

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"name": p["name"], "phone": p["phone"], "message": p["message"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Add("contacts", "contacts", {"name": p["name"], "phone": p["phone"],
                                             "starred": True}),
                Add("messages", "messages", {"phone": p["phone"], "body": p["message"]})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield UseSkill(skill=self.skill, arguments=self.skill_args(p, None))
        yield finish()


class QuietAdd(_NewContact):
    name = "skill_add_contact_quietly"
    skill = "add_contact_quietly"
    goal_template = "Add {name} ({phone}) to my favourite contacts. Don't message them."
    test_only = True

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"name": p["name"], "phone": p["phone"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Add("contacts", "contacts", {"name": p["name"], "phone": p["phone"],
                                             "starred": True})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield UseSkill(skill=self.skill, arguments=self.skill_args(p, None))
        yield finish()


# ---- email -------------------------------------------------------------------------------------

class _Reply(_Skill):
    apps = ("email",)
    pools = MappingProxyType({"topic": TOPICS, "body": PHRASES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        topic, other = TOPICS.sample(rng, split, 2)
        return {"topic": topic, "other": other, "body": PHRASES.pick(rng, split),
                "_folder": "archive"}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        rows = [{"id": rid(rng, "em"), "folder": "inbox", "sender": sender,
                 "to": ["me@example.com"], "subject": f"About the {topic}",
                 "body": f"Some questions about the {topic}.", "received_at": when,
                 "read": False, "starred": False}
                for topic, sender, when in ((p["topic"], "office@firm.test", "2025-12-28T10:00"),
                                            (p["other"], "info@club.test", "2025-12-29T10:00"))]
        rng.shuffle(rows)
        return {"email": {"emails": rows}}

    def email(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return next(r for r in before.rows("email", "emails")
                    if r["subject"] == f"About the {p['topic']}")

    def find(self, p: dict[str, Any], observe: Observe) -> Any:
        yield call("email.search", query=p["topic"])
        return row_where(rows_of(observe()), subject=f"About the {p['topic']}")["id"]

    def reply(self, p: dict[str, Any], before: Any) -> Expectation:
        return Add("email", "emails", {"folder": "sent", "to": ["office@firm.test"],
                                       "body": p["body"]})


class ReplyAndFile(_Reply):
    name = "skill_reply_and_file"
    skill = "reply_and_file"
    goal_template = ("Answer the email about the {topic} with \"{body}\" and then move it out of "
                     "the inbox to the Archive.")

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"email_id": self.email(p, before)["id"], "body": p["body"],
                "folder": p["_folder"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [self.reply(p, before),
                Update("email", "emails", self.email(p, before)["id"], {"folder": p["_folder"]})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        email_id = yield from self.find(p, observe)
        yield UseSkill(skill=self.skill, arguments={"email_id": email_id, "body": p["body"],
                                                    "folder": p["_folder"]})
        yield finish()


class ReplyOnly(_Reply):
    name = "skill_reply_only"
    skill = "reply_only"
    goal_template = "Answer the email about the {topic} with \"{body}\"; leave it in the inbox."
    test_only = True

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"email_id": self.email(p, before)["id"], "body": p["body"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [self.reply(p, before)]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        email_id = yield from self.find(p, observe)
        yield UseSkill(skill=self.skill, arguments={"email_id": email_id, "body": p["body"]})
        yield finish()


TEMPLATES = (ScheduleMeeting, MeetingByEmail, BlockTime, Bedtime, BedtimeDimmed, Nap, Morning,
             Focus, MeetingMode, Travel, Landing, Privacy, SharePhoto, ArchivePhoto,
             QuickReorder, StockUp, SaveAndGo, Bookmark, NoteAndEmail, NoteAndText, Welcome,
             QuietAdd, ReplyAndFile, ReplyOnly)
