"""Deeper sub-agent templates: three hand-offs or more, where one helper's result is the next
helper's input (the main agent merges them), and the right helper does each part.

- `sa_event_place_to_contact`: the scheduler finds where an event is, the navigator finds
  that place's address (among a similarly named place), the communicator finds the person
  (among a namesake) and texts the address it is handed.
- `sa_next_event_place_and_alarm`: the scheduler finds the next occurrence of an event (not
  the past one), the navigator finds and saves its place, and the scheduler sets an alarm
  half an hour before it.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Any

from devices.suite.diff import Add, Delegated, Expectation
from devices.suite.template import Observe, OracleScript
from devices.suite.templates._hkit import (
    LISTS,
    PLACES,
    STREETS,
    TITLES,
    person_pools,
    rid,
    row_where,
)
from devices.suite.templates._kit import finish
from devices.suite.templates._profile import declare
from devices.suite.templates.subagent import DoneBy, _Team, _WithContact, delegate, results

__all__ = ["TEMPLATES"]


def _event(rng: random.Random, title: str, start: str, location: str) -> dict[str, Any]:
    end = (datetime.strptime(start, "%Y-%m-%dT%H:%M") + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    return {"id": rid(rng, "ev"), "title": title, "start": start, "end": end, "location": location,
            "attendees": [], "notes": ""}


def _places(rng: random.Random, place: str, street: str, other: str) -> list[dict[str, Any]]:
    """The place, a similarly named one elsewhere, and an unrelated one."""
    return [{"id": rid(rng, "pl"), "name": place, "category": "venue", "address": street, "rating": 4.4},
            {"id": rid(rng, "pl"), "name": f"{place} Annex", "category": "venue",
             "address": f"{rng.randint(2, 90)} Dockside", "rating": 4.6},
            {"id": rid(rng, "pl"), "name": other, "category": "venue", "address": "2 Side Alley",
             "rating": 4.1}]


class EventPlaceToContact(_WithContact):
    name = "sa_event_place_to_contact"
    apps = ("calendar", "contacts", "maps", "messages")
    goal_template = ("Text {first} from {company} the street address of the place my '{title}' is "
                     "at. Hand each part to the helper made for it.")
    pools = person_pools(title=TITLES, place=PLACES, street=STREETS)

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        title, other_title = TITLES.sample(rng, split, 2)
        place, other = PLACES.sample(rng, split, 2)
        return {**self.people(rng, split), "title": title, "other_title": other_title, "place": place,
                "other": other, "street": STREETS.pick(rng, split),
                "_date": f"2026-01-{rng.randint(5, 27):02d}", "_hour": rng.randint(9, 17)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        events = [_event(rng, p["title"], f"{p['_date']}T{p['_hour']:02d}:00", p["place"]),
                  _event(rng, p["other_title"], f"{p['_date']}T{p['_hour'] - 2:02d}:30", p["other"])]
        rng.shuffle(events)
        return {"calendar": {"events": events}, "maps": {"places": _places(rng, p["place"], p["street"], p["other"])},
                "contacts": {"contacts": self.contacts(p, rng)}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        return [DoneBy(("scheduler",), "calendar.search"),
                DoneBy(("navigator",), "maps.search_places"),
                *self.texted(p, before, p["street"], ("scheduler", "navigator"))]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield delegate("scheduler", f"Find my '{p['title']}'.", ("calendar.search", {"query": p["title"]}))
        event = row_where(results(observe)[0], title=p["title"])
        yield delegate("navigator", "Find this place.", ("maps.search_places", {"query": event["location"]}))
        place = row_where(results(observe)[0], name=event["location"])
        yield from self.text_contact(p, observe, "Text the address.", f"{place['name']} is at {place['address']}",
                                     {"address": place["address"]})
        yield finish()


class NextEventPlaceAndAlarm(_Team):
    name = "sa_next_event_place_and_alarm"
    apps = ("calendar", "clock", "maps")
    goal_template = ("For my next '{title}': save the place it's at to my '{list}' list, and set an alarm "
                     "half an hour before it starts. Hand each part to the helper made for it.")
    pools = MappingProxyType({"title": TITLES, "list": LISTS, "place": PLACES, "street": STREETS})

    def generate_params(self, rng: random.Random, split: Any) -> dict[str, Any]:
        place, past_place = PLACES.sample(rng, split, 2)
        return {"title": TITLES.pick(rng, split), "list": LISTS.pick(rng, split), "place": place,
                "past_place": past_place, "street": STREETS.pick(rng, split),
                "_date": f"2026-01-{rng.randint(3, 27):02d}", "_past": f"2025-12-{rng.randint(5, 28):02d}",
                "_hour": rng.randint(8, 18), "_minute": rng.choice((0, 15, 30, 45))}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        events = [_event(rng, p["title"], f"{p['_date']}T{p['_hour']:02d}:{p['_minute']:02d}", p["place"]),
                  _event(rng, p["title"], f"{p['_past']}T{p['_hour'] - 1:02d}:{p['_minute']:02d}", p["past_place"])]
        rng.shuffle(events)
        return {"calendar": {"events": events},
                "maps": {"places": _places(rng, p["place"], p["street"], p["past_place"])}}

    @staticmethod
    def _alarm(p: dict[str, Any]) -> str:
        return (datetime(2026, 1, 1, p["_hour"], p["_minute"]) - timedelta(minutes=30)).strftime("%H:%M")

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        place = next(r["id"] for r in before.rows("maps", "places") if r["name"] == p["place"])
        return [DoneBy(("scheduler",), "calendar.search"),
                Delegated("navigator", (p["place"],), others_ok=("scheduler",)),
                DoneBy(("navigator",), "maps.search_places"),
                DoneBy(("navigator",), "maps.save_place", {"place_id": place, "list": p["list"]}),
                DoneBy(("scheduler",), "clock.set_alarm", {"time": self._alarm(p)}),
                Add("maps", "saved", {"place_id": place, "list": p["list"]}),
                Add("clock", "alarms", {"time": self._alarm(p)})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        yield delegate("scheduler", f"Find my '{p['title']}'.", ("calendar.search", {"query": p["title"]}))
        now = observe().clock_ms
        today = datetime.fromtimestamp(now / 1000, UTC).strftime("%Y-%m-%dT%H:%M")
        ahead = sorted((r for r in results(observe)[0] if r["title"] == p["title"] and r["start"] >= today),
                       key=lambda r: r["start"])
        event = ahead[0]
        yield delegate("navigator", "Find this place.", ("maps.search_places", {"query": event["location"]}))
        place = row_where(results(observe)[0], name=event["location"])
        yield delegate("navigator", "Save it.", ("maps.save_place", {"place_id": place["id"], "list": p["list"]}),
                       context={"place": place["name"]})
        start = datetime.strptime(event["start"], "%Y-%m-%dT%H:%M")
        yield delegate("scheduler", "Set the alarm.",
                       ("clock.set_alarm", {"time": (start - timedelta(minutes=30)).strftime("%H:%M"),
                                            "label": p["title"]}))
        yield finish()


TEMPLATES = (EventPlaceToContact, NextEventPlaceAndAlarm)

# (oracle actions, lookups) per template, measured by devices.suite.templates._profile.measure.
declare(TEMPLATES, {
    "sa_event_place_to_contact": (4, 3),
    "sa_next_event_place_and_alarm": (4, 2),
}, chains={"sa_event_place_to_contact": 2})  # the contact lookup is independent of the place chain
