"""A deeper memory template: who "my sister" is lives only in memory (first name, then which of
two namesakes by employer), and the message's content is a chain on the phone (an event's
place, then that place's address).

- `mem_relation_event_address`: memory (who), memory (which one), contacts (their row),
  calendar (where the event is; another event is elsewhere), maps (that place's address; a
  similarly named place is elsewhere), then one text.
"""

from __future__ import annotations

import random
from typing import Any

from devices.suite.diff import Add, Expectation
from devices.suite.template import Observe, OracleScript
from devices.suite.templates._hkit import (
    PLACES,
    STREETS,
    TITLES,
    contact_named,
    person_pools,
    rid,
    row_where,
    rows_of,
)
from devices.suite.templates._kit import call, finish
from devices.suite.templates._profile import declare
from devices.suite.templates.memory import _Relation

__all__ = ["TEMPLATES"]


class RelationEventAddress(_Relation):
    name = "mem_relation_event_address"
    goal_template = "Text my {relation} the street address of the place my '{title}' is at."
    apps = ("contacts", "messages", "calendar", "maps")
    pools = person_pools(title=TITLES, place=PLACES, street=STREETS)

    def extra(self, rng: random.Random, split: Any) -> dict[str, Any]:
        title, other_title = TITLES.sample(rng, split, 2)
        place, other = PLACES.sample(rng, split, 2)
        return {"title": title, "other_title": other_title, "place": place, "other": other,
                "street": STREETS.pick(rng, split), "_day": rng.randint(5, 27), "_hour": rng.randint(9, 17)}

    def initial_state(self, p: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        state = self.people_state(p, rng)
        date = f"2026-01-{p['_day']:02d}"
        events = [{"id": rid(rng, "ev"), "title": title, "start": f"{date}T{hour:02d}:00",
                   "end": f"{date}T{hour + 1:02d}:00", "location": where, "attendees": [], "notes": ""}
                  for title, hour, where in ((p["title"], p["_hour"], p["place"]),
                                             (p["other_title"], p["_hour"] - 2, p["other"]))]
        places = [{"id": rid(rng, "pl"), "name": p["place"], "category": "venue", "address": p["street"],
                   "rating": 4.3},
                  {"id": rid(rng, "pl"), "name": f"{p['place']} Annex", "category": "venue",
                   "address": f"{rng.randint(2, 90)} Dockside", "rating": 4.7},
                  {"id": rid(rng, "pl"), "name": p["other"], "category": "venue", "address": "2 Side Alley",
                   "rating": 4.0}]
        rng.shuffle(events)
        rng.shuffle(places)
        return {**state, "calendar": {"events": events}, "maps": {"places": places}}

    def expect(self, p: dict[str, Any], before: Any) -> list[Expectation]:
        phone = contact_named(before, p["person"])["phone"]
        return [Add("messages", "messages", {"phone": phone, "direction": "out", "body": ("~", p["street"])})]

    def oracle(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        contact = yield from self.who(p, observe)
        yield call("calendar.search", query=p["title"])
        where = row_where(rows_of(observe()), title=p["title"])["location"]
        yield call("maps.search_places", query=where)
        place = row_where(rows_of(observe()), name=where)
        yield call("messages.send", phone=contact["phone"], body=f"{place['name']}: {place['address']}")
        yield finish()


TEMPLATES = (RelationEventAddress,)

# (oracle actions, lookups) per template, measured by devices.suite.templates._profile.measure.
declare(TEMPLATES, {"mem_relation_event_address": (6, 5)},
        chains={"mem_relation_event_address": 3})  # memory → memory → contacts; calendar → maps apart
