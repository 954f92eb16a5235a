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
    LEVELS,
    LISTS,
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
    Cluttered,
    ContactPair,
    World,
    derived_parameters,
    memory_value,
    person_pools,
    rid,
    row_where,
    rows_of,
)
from devices.suite.templates._kit import call, finish
from devices.suite.templates._profile import declare
from schemas.actions import MemoryRead, UseSkill

__all__ = ["TEMPLATES"]

MEETING_APPS = ("calendar", "contacts", "messages", "email")
DEVICE_APPS = ("settings", "clock", "calendar")
NOTE_APPS = ("notes", "email", "messages", "contacts")


class _Skill(Cluttered, Template):
    """One skill call (after lookups) solves the task; subclasses give the skill's arguments,
    the state change and the lookups."""

    family = "skills"
    checker = "skill"
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

class _WithContact(ContactPair, _Skill):
    @staticmethod
    def find(p: dict[str, Any], observe: Observe) -> Any:
        return row_where(rows_of(observe()), company=p["company"])


class _Meeting(_WithContact):
    apps = MEETING_APPS
    pools = person_pools(title=TITLES)

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
    goal_template = ("Right after my '{anchor}' on {date}, hold an hour in my diary for '{title}'. "
                     "It's just for me: don't invite anyone.")
    pools = person_pools(title=TITLES, anchor=TITLES)

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        title, anchor = TITLES.sample(rng, split, 2)
        day = rng.randint(16, 26)
        return {**self.people(rng, split), "title": title, "anchor": anchor,
                "date": f"2026-01-{day:02d}", "_other_date": f"2026-01-{day + 1:02d}",
                "_end": rng.randrange(9 * 60, 16 * 60, 15)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        events = [_event(rng, p["anchor"], p["date"], p["_end"] - 45, 45),
                  _event(rng, p["anchor"], p["_other_date"], p["_end"] - 90, 45)]
        rng.shuffle(events)
        return {**super().initial_state(p, rng), "calendar": {"events": events}}

    def block(self, p: dict[str, Any]) -> dict[str, str]:
        return {"title": p["title"], "start": f"{p['date']}T{_hhmm(p['_end'])}",
                "end": f"{p['date']}T{_hhmm(p['_end'] + 60)}"}

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return self.block(p)

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Add("calendar", "events", {**self.block(p), "attendees": []})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("calendar.search", query=p["anchor"])
        end = next(r["end"] for r in rows_of(observe()) if r["title"] == p["anchor"]
                   and r["start"].startswith(p["date"]))
        finish_at = _minutes(end[11:]) + 60
        yield UseSkill(skill=self.skill, arguments={
            "title": p["title"], "start": end, "end": f"{p['date']}T{_hhmm(finish_at)}"})
        yield finish()


# ---- device routines --------------------------------------------------------------------------

class _Device(_Skill):
    apps = DEVICE_APPS
    start_settings: ClassVar[Mapping[str, Any]] = MappingProxyType({})

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return {"settings": {"volume_ring": p["_volume"], "brightness": p["_brightness"],
                             "location": p["_location"], **self.start_settings}}

    def world(self, rng: random.Random) -> dict[str, Any]:
        """Private parameters that vary the phone each instance starts from (the brightness
        stays above every level a task asks for, so setting it is always a change)."""
        return {"_volume": rng.randint(1, 7), "_brightness": rng.randrange(40, 100, 2),
                "_location": rng.random() < 0.8}

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield UseSkill(skill=self.skill, arguments=self.skill_args(p, None))
        yield finish()


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _minutes(hhmm: str) -> int:
    hour, minute = hhmm.split(":")
    return int(hour) * 60 + int(minute)


def _event(rng: random.Random, title: str, date: str, start: int, length: int) -> dict[str, Any]:
    return {"id": rid(rng, "ev"), "title": title, "start": f"{date}T{_hhmm(start)}",
            "end": f"{date}T{_hhmm(start + length)}", "location": "", "attendees": [],
            "notes": ""}


TODAY = "2026-01-01"  # the phone's clock starts at 2026-01-01T08:00 in every instance
NOW = 8 * 60


class Bedtime(_Device):
    name = "skill_bedtime"
    skill = "bedtime_mode"
    goal_template = ("Get the phone ready for the night. I want to be up an hour before my first "
                     "event on {date}.")
    pools = MappingProxyType({"_first": TITLES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        first, *others = TITLES.sample(rng, split, 3)
        starts = sorted(rng.sample(range(7 * 60, 12 * 60, 15), 3))
        return {"date": f"2026-01-{rng.randint(16, 27):02d}", "_first": first,
                "_others": others, "_starts": starts, "_early": rng.randrange(5 * 60, 7 * 60, 15),
                **self.world(rng)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        day_before = f"2026-01-{int(p['date'][-2:]) - 1:02d}"
        events = [_event(rng, title, p["date"], start, 45) for title, start in
                  zip((p["_first"], *p["_others"]), p["_starts"], strict=True)]
        events.append(_event(rng, p["_others"][0], day_before, p["_early"], 30))
        rng.shuffle(events)
        return {**super().initial_state(p, rng), "calendar": {"events": events}}

    def wake(self, p: dict[str, Any]) -> str:
        return _hhmm(p["_starts"][0] - 60)

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"wake_time": self.wake(p)}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Setting("do_not_disturb", True), Setting("dark_mode", True),
                Add("clock", "alarms", {"time": self.wake(p), "label": "Wake up"})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("calendar.list_events", date=p["date"])
        first = min(r["start"] for r in rows_of(observe()) if r["start"].startswith(p["date"]))
        yield UseSkill(skill=self.skill,
                       arguments={"wake_time": _hhmm(_minutes(first[11:]) - 60)})
        yield finish()


class BedtimeDimmed(Bedtime):
    name = "skill_bedtime_dimmed"
    goal_template = ("Night mode for the phone please, with the screen down to {level}%, and wake "
                     "me at {time}.")
    test_only = True
    pools = MappingProxyType({"time": TIMES, "level": DIM_LEVELS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"time": TIMES.pick(rng, split), "level": DIM_LEVELS.pick(rng, split),
                **self.world(rng)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        return _Device.initial_state(self, p, rng)

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"wake_time": p["time"], "brightness": p["level"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Setting("do_not_disturb", True), Setting("dark_mode", True),
                Add("clock", "alarms", {"time": p["time"], "label": "Wake up"}),
                Setting("brightness", p["level"])]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        return _Device.oracle(self, p, observe)


class _Until(_Device):
    """A routine that lasts until a calendar event today (a same-titled one is tomorrow)."""

    pools = MappingProxyType({"title": TITLES})
    label: ClassVar[str]

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        title, other = TITLES.sample(rng, split, 2)
        return {"title": title, "_other": other, "_in": rng.randrange(25, 180, 5),
                "_tomorrow": rng.randrange(9 * 60, 17 * 60, 15), **self.world(rng)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        events = [_event(rng, p["title"], TODAY, NOW + p["_in"], 30),
                  _event(rng, p["title"], "2026-01-02", p["_tomorrow"], 30),
                  _event(rng, p["_other"], TODAY, NOW + p["_in"] + 60, 30)]
        rng.shuffle(events)
        return {**super().initial_state(p, rng), "calendar": {"events": events}}

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"minutes": p["_in"]}

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("clock.now")
        now = observe().result.value["now"]
        yield call("calendar.search", query=p["title"])
        start = next(r["start"] for r in rows_of(observe())
                     if r["title"] == p["title"] and r["start"][:10] == now[:10])
        minutes = _minutes(start[11:]) - _minutes(now[11:])
        yield UseSkill(skill=self.skill, arguments={"minutes": minutes})
        yield finish()


class Nap(_Until):
    name = "skill_nap"
    skill = "nap_mode"
    goal_template = "I'll nap until my '{title}' today. Keep the phone quiet till then."

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Setting("do_not_disturb", True),
                Add("clock", "timers", {"seconds": p["_in"] * 60, "label": "Nap"})]


class Morning(_Device):
    name = "skill_morning"
    skill = "morning_mode"
    goal_template = "Good morning! Set the phone up for the day, at my usual daytime brightness."
    pools = MappingProxyType({"level": LEVELS})
    start_settings = MappingProxyType({"do_not_disturb": True, "dark_mode": True})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        level, night = rng.sample(list(LEVELS.values(split)), 2)
        return {"level": level, "_night": night, **self.world(rng)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        state = super().initial_state(p, rng)
        state["settings"]["brightness"] = 10
        return {**state, "memory": {"brightness_daytime": p["level"],
                                    "brightness_night": p["_night"]}}

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"brightness": p["level"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Setting("do_not_disturb", False), Setting("dark_mode", False),
                Setting("brightness", p["level"])]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield MemoryRead(query="daytime brightness")
        level = memory_value(observe(), "brightness_daytime")
        yield UseSkill(skill=self.skill, arguments={"brightness": int(level)})
        yield finish()


class Focus(_Until):
    name = "skill_focus"
    skill = "focus_mode"
    goal_template = ("Deep work until my '{title}' today: silence the phone completely until it "
                     "starts.")

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Setting("do_not_disturb", True), Setting("volume_ring", 0),
                Add("clock", "timers", {"seconds": p["_in"] * 60, "label": "Focus"})]


class MeetingMode(_Until):
    name = "skill_meeting_mode"
    skill = "meeting_mode"
    goal_template = ("I'm walking into '{title}' now. Mute the ringer for as long as it is "
                     "scheduled today, but leave do-not-disturb as it is.")
    test_only = True

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        events = [_event(rng, p["title"], TODAY, NOW, p["_in"]),
                  _event(rng, p["title"], "2026-01-02", p["_tomorrow"], p["_in"] + 30),
                  _event(rng, p["_other"], TODAY, NOW + p["_in"], 45)]
        rng.shuffle(events)
        return {**_Device.initial_state(self, p, rng), "calendar": {"events": events}}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Setting("volume_ring", 0),
                Add("clock", "timers", {"seconds": p["_in"] * 60, "label": "Meeting"})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield call("calendar.search", query=p["title"])
        event = next(r for r in rows_of(observe())
                     if r["title"] == p["title"] and r["start"].startswith(TODAY))
        minutes = _minutes(event["end"][11:]) - _minutes(event["start"][11:])
        yield UseSkill(skill=self.skill, arguments={"minutes": minutes})
        yield finish()


class _Flight(ContactPair, _Device):
    """A flight in the calendar (another one goes elsewhere), a contact with a namesake, a
    message about the flight to send, and the right routine for the phone."""

    pools = MappingProxyType({"city": CITIES, "surname": SURNAMES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        city, other = CITIES.sample(rng, split, 2)
        codes = rng.sample(range(100, 999), 2)
        return {"city": city, **self.people(rng, split),
                "_other_city": other, "_flight": f"FW{codes[0]}", "_other_flight": f"FW{codes[1]}",
                **self.world(rng)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        events = [_event(rng, f"Flight {p['_flight']} to {p['city']}", TODAY, 10 * 60, 180),
                  _event(rng, f"Flight {p['_other_flight']} to {p['_other_city']}",
                         "2026-01-09", 14 * 60, 120)]
        return {**super().initial_state(p, rng), "calendar": {"events": events},
                "contacts": {"contacts": self.contacts(p, rng)}}

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {}

    def flight(self, p: dict[str, Any], observe: Observe) -> Any:
        yield call("calendar.search", query=p["city"])
        title = next(r["title"] for r in rows_of(observe()) if r["title"].endswith(p["city"]))
        return title.split()[1]

    def friend(self, p: dict[str, Any], observe: Observe) -> Any:
        yield call("contacts.search", query=p["first"])
        return row_where(rows_of(observe()), company=p["company"])


class Travel(_Flight):
    name = "skill_travel"
    skill = "travel_mode"
    goal_template = ("They're boarding my flight to {city}. Text {first} from {company} its flight "
                     "number, then get the phone ready for the flight.")
    apps = (*DEVICE_APPS, "contacts", "messages")
    start_settings = MappingProxyType({"bluetooth": True})

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        phone = self.contact(before, p["person"])["phone"]
        return [Setting("airplane_mode", True), Setting("bluetooth", False),
                Setting("battery_saver", True),
                Add("messages", "messages", {"phone": phone, "body": ("~", p["_flight"])})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        code = yield from self.flight(p, observe)
        friend = yield from self.friend(p, observe)
        yield call("messages.send", phone=friend["phone"], body=f"Boarding flight {code} now.")
        yield UseSkill(skill=self.skill, arguments={})
        yield finish()


class Landing(_Flight):
    name = "skill_landing"
    skill = "landing_mode"
    goal_template = ("Just touched down in {city}. Get the phone back to normal, then email {first} "
                     "from {company} with the subject 'Landed' saying which flight I came on.")
    apps = (*DEVICE_APPS, "contacts", "email")
    start_settings = MappingProxyType({"airplane_mode": True, "wifi": False,
                                      "battery_saver": True, "bluetooth": False})
    test_only = True

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        email = self.contact(before, p["person"])["email"]
        return [Setting("airplane_mode", False), Setting("wifi", True),
                Setting("battery_saver", False),
                Add("email", "emails", {"folder": "sent", "to": [email], "subject": "Landed",
                                        "body": ("~", p["_flight"])})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield UseSkill(skill=self.skill, arguments={})
        code = yield from self.flight(p, observe)
        friend = yield from self.friend(p, observe)
        yield call("email.send", to=[friend["email"]], subject="Landed",
                   body=f"I came in on flight {code}.")
        yield finish()


class Privacy(_Device):
    name = "skill_privacy"
    skill = "privacy_mode"
    goal_template = ("I'm in {city} for a while: stop letting anything know where I am, and cut "
                     "the wireless headphones link.")
    start_settings = MappingProxyType({"bluetooth": True, "location": True})
    pools = MappingProxyType({"city": CITIES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        return {"city": CITIES.pick(rng, split), **self.world(rng)}

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Setting("location", False), Setting("bluetooth", False)]


# ---- photos -------------------------------------------------------------------------------------

class _Photo(_WithContact):
    apps = ("files", "contacts", "messages")
    pools = person_pools(album=ALBUMS, tag=TAGS)

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
    pools = person_pools(title=SUBJECTS, body=PHRASES)

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
    """Someone new texted me to introduce themselves; another newcomer texted about something
    else. Their name and number are only in their message."""

    apps = ("contacts", "messages")
    pools = MappingProxyType({"_surname": SURNAMES, "topic": TOPICS, "message": PHRASES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        world = World(rng, split)
        name, other = world.person(), world.person()
        topic, other_topic = TOPICS.sample(rng, split, 2)
        return {"topic": topic, "message": PHRASES.pick(rng, split), "_name": name,
                "_surname": name.split()[1], "_phone": world.phone(), "_other": other,
                "_other_topic": other_topic, "_other_phone": world.phone()}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        rows = [{"id": rid(rng, "msg"), "contact": phone, "phone": phone, "direction": "in",
                 "body": f"Hi, it's {name} about the {topic}. This is my number.",
                 "sent_at": f"2025-12-{day}T17:00", "read": False}
                for name, phone, topic, day in ((p["_name"], p["_phone"], p["topic"], 27),
                                                (p["_other"], p["_other_phone"],
                                                 p["_other_topic"], 28))]
        return {"messages": {"messages": rows}}

    def newcomer(self, p: dict[str, Any], observe: Observe) -> Any:
        yield call("messages.search", query=p["topic"])
        row = next(r for r in rows_of(observe()) if r["direction"] == "in"
                   and f"about the {p['topic']}" in r["body"])
        return row["body"].split("it's ", 1)[1].split(" about", 1)[0], row["phone"]


class Welcome(_NewContact):
    name = "skill_welcome_contact"
    skill = "welcome_contact"
    goal_template = ("Whoever texted me about the {topic}: add them to my favourite contacts under "
                     "their full name and text them \"{message}\".")

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"name": p["_name"], "phone": p["_phone"], "message": p["message"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Add("contacts", "contacts", {"name": p["_name"], "phone": p["_phone"],
                                             "starred": True}),
                Add("messages", "messages", {"phone": p["_phone"], "body": p["message"]})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        name, phone = yield from self.newcomer(p, observe)
        yield UseSkill(skill=self.skill, arguments={"name": name, "phone": phone,
                                                    "message": p["message"]})
        yield finish()


class QuietAdd(_NewContact):
    name = "skill_add_contact_quietly"
    skill = "add_contact_quietly"
    goal_template = ("Whoever texted me about the {topic}: add them to my favourite contacts under "
                     "their full name. Don't message them.")
    test_only = True

    def skill_args(self, p: dict[str, Any], before: Any) -> dict[str, Any]:
        return {"name": p["_name"], "phone": p["_phone"]}

    def changes(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [Add("contacts", "contacts", {"name": p["_name"], "phone": p["_phone"],
                                             "starred": True})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        name, phone = yield from self.newcomer(p, observe)
        yield UseSkill(skill=self.skill, arguments={"name": name, "phone": phone})
        yield finish()


# ---- email -------------------------------------------------------------------------------------

class _Reply(_Skill):
    apps = ("email",)
    pools = MappingProxyType({"topic": TOPICS, "body": PHRASES})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        topic, other = TOPICS.sample(rng, split, 2)
        return {"topic": topic, "other": other, "body": PHRASES.pick(rng, split),
                "_folder": "archive", "_day": rng.randint(10, 27)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        rows = [{"id": rid(rng, "em"), "folder": "inbox", "sender": sender,
                 "to": ["me@example.com"], "subject": f"About the {topic}",
                 "body": f"Some questions about the {topic}.", "received_at": when,
                 "read": False, "starred": False}
                for topic, sender, when in (
                    (p["topic"], "office@firm.test", f"2025-12-{p['_day']:02d}T10:00"),
                    (p["other"], "info@club.test", f"2025-12-{p['_day'] + 1:02d}T10:00"))]
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

# (oracle actions, lookups) per template, measured by
# devices.suite.templates._profile.measure; the family tests re-measure them.
declare(TEMPLATES, {
    "skill_schedule_meeting": (2, 1),
    "skill_meeting_by_email": (2, 1),
    "skill_block_time": (2, 1),
    "skill_bedtime": (2, 1),
    "skill_bedtime_dimmed": (1, 0),
    "skill_nap": (3, 2),
    "skill_morning": (2, 1),
    "skill_focus": (3, 2),
    "skill_meeting_mode": (2, 1),
    "skill_travel": (4, 2),
    "skill_landing": (4, 2),
    "skill_privacy": (1, 0),
    "skill_share_photo": (3, 2),
    "skill_archive_photo": (2, 1),
    "skill_quick_reorder": (2, 1),
    "skill_stock_up": (2, 1),
    "skill_save_and_go": (2, 1),
    "skill_bookmark_place": (2, 1),
    "skill_note_and_email": (2, 1),
    "skill_note_and_text": (2, 1),
    "skill_welcome_contact": (2, 1),
    "skill_add_contact_quietly": (2, 1),
    "skill_reply_and_file": (2, 1),
    "skill_reply_only": (2, 1),
}, chains={  # independent lookups (neither decides the other) chain as one
    "skill_travel": 1,
    "skill_landing": 1,
    "skill_nap": 1,
    "skill_focus": 1,
    "skill_share_photo": 1,
})
