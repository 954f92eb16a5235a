"""Shared kit for the memory, skill and sub-agent templates: their own value pools (train, dev
and test disjoint), randomised worlds with distractors, and oracle helpers that read values
from observations only."""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from devices.suite.pools import Pool
from devices.suite.templates._world import FIRST
from schemas.observations import Observation
from schemas.tasks import Split

__all__ = [
    "ALBUMS",
    "CITIES",
    "CODES",
    "COMPANIES",
    "DIM_LEVELS",
    "FOCUS_MINUTES",
    "LEVELS",
    "LISTS",
    "NAP_MINUTES",
    "PHRASES",
    "PLACES",
    "PRODUCTS",
    "STREETS",
    "SUBJECTS",
    "SURNAMES",
    "TAGS",
    "TIMES",
    "TITLES",
    "TOPICS",
    "WEEKDAYS",
    "Cluttered",
    "ContactPair",
    "World",
    "contact_named",
    "derived_parameters",
    "hits",
    "memory_value",
    "person_pools",
    "pool3",
    "rid",
    "row_where",
    "rows_of",
]


def pool3(train: str, dev: str, test: str) -> Pool:
    """A pool with train, dev and test values of their own ('|'-separated)."""
    t, d, s = (tuple(x.split("|")) for x in (train, dev, test))
    return Pool(t, s, d)


# Values these families draw. Each is distinctive (multi-word or coined), so a value of one
# split never appears as a word in another split's goals, and none is in the default world.
SURNAMES = pool3("Abernathy|Bjornsson|Castellanos|Delacroix|Eriksen|Fairweather|Gallagher"
                 "|Halvorsen|Ishikawa|Jablonski|Kowalczyk|Lindgren",
                 "Moreau|Nakamura|Oyelaran|Petrakis|Quintero|Rasmussen",
                 "Sandoval|Takahashi|Umarov|Vasquez|Wojcik|Xiong|Yamada|Zielinski|Achterberg"
                 "|Brannigan")
PLACES = pool3("Bluebird Diner|Cedar Hollow Clinic|Driftwood Books|Ember Pizza|Foxglove Florist"
               "|Greystone Gym|Hollyhock Tea Room|Ironbark Hardware",
               "Jasper Laundry|Kettlebell Studio|Lindenwood Vets|Moonrise Cafe",
               "Nettle and Rye Bakery|Oakmoss Spa|Pinecone Pharmacy|Quartz Climbing"
               "|Rosehip Bistro|Sorrel Dental")
PRODUCTS = pool3("Oat milk 1L|Espresso beans 500g|Dish soap refill|AA batteries 8-pack"
                 "|Granola 750g|Paper towels 6-roll",
                 "Almond butter|Green tea 40 bags|Rice cakes|Sparkling water 12-pack",
                 "Coconut yogurt|Rye crackers|Laundry pods|Chickpea pasta|Maple syrup 250ml"
                 "|Hand soap 500ml")
STREETS = pool3("12 Larkspur Lane|77 Quayside Road|3 Thistle Mews|140 Old Mill Road"
                "|9 Saltmarsh Close|52 Bramble Walk",
                "61 Kingfisher Row|25 Tannery Yard|8 Orchard Rise|44 Foundry Lane",
                "4 Beacon Hill|93 Willow Bank|17 Ropewalk Street|210 Canal Side|36 Heron Gate"
                "|71 Mariner Court")
CODES = pool3("3158|9027|4471|6309|1862|7734|5296", "2590|8416|5043|6187",
              "6721|3385|9950|1247|4608|8832")
PHRASES = pool3("the plumber comes at noon|I saved you a seat|the gate code changed"
                "|lunch is on me today|bring the blue folder",
                "the train is delayed|the cat has been fed|your parcel arrived",
                "the meeting room moved|I left the key with Ana|the dinner is cancelled"
                "|pick up bread please|the car is washed")
SUBJECTS = pool3("Gutter repair quote|Choir rota|Allotment fees|Boiler service|Window cleaning",
                 "Kayak rental|Library fines|Bike storage",
                 "Roof tiles order|Sailing club dues|Piano tuning|Chimney sweep|Fence panels")
TITLES = pool3("Budget walkthrough|Design review|Tenancy check|Mentoring session"
               "|Volunteer briefing",
               "Grant planning|Pottery class|Supplier call",
               "Harvest fair prep|Audit kickoff|Wine tasting|Orchestra rehearsal|Lease signing")
TOPICS = pool3("gutter quote|choir rota|allotment plot|boiler check|window frames",
               "kayak trip|library card|bike rack",
               "roof tiles|sailing club|piano tuning|chimney sweep|fence repair")
TAGS = pool3("keepsake-pick|frame-it|scan-later|print-me", "for-album|to-edit|crop-me",
             "gift-print|wall-art|memory-lane|postcard-pick")
ALBUMS = pool3("Old Town Stroll|Seaside Weekend|Graduation Day|Lakeside Camp",
               "Garden Party Pics|Snow Trip 2025|Picnic by the Mill",
               "Road Trip North|Birthday Bash 40|Museum Day Out|Harbour Walk Pics")
LISTS = pool3("Date night ideas|Rainy day plans|Weekend wander|Take guests here",
              "Brunch spots list|Errand stops|Running routes",
              "Visitor tours|Kids outings list|Quiet corners|Late night eats")
# HH:MM: train minutes :05/:25/:45, dev :10/:50, test :15/:35/:55 (no time in two splits).
TIMES = pool3("06:05|06:25|06:45|07:05|07:25|07:45|08:05|08:25",
              "06:10|06:50|07:10|07:50|08:10",
              "05:55|06:15|06:35|06:55|07:15|07:35|08:15|08:35")
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri")
# Whole-number pools: minutes, levels and counts (train, test, dev disjoint).
NAP_MINUTES = Pool((15, 20, 25, 30), (40, 45, 50, 55), (35, 38))
FOCUS_MINUTES = Pool((25, 50, 60, 90), (100, 110, 120), (70, 80))
LEVELS = Pool((55, 65, 70, 75), (85, 90, 95), (78, 82))
DIM_LEVELS = Pool((5, 10, 15), (25, 30, 35), (18, 22))
CITIES = pool3("Reykjavik|Lisbon|Montreal|Nairobi|Osaka", "Tallinn|Cordoba|Hobart",
               "Valparaiso|Tbilisi|Windhoek|Krakow|Da Nang")


# Companies that tell a contact from a namesake with the same first name.
COMPANIES = ("Northwind", "Bluegate", "Copperline", "Driftwood Labs", "Elmstead")


def person_pools(**more: Pool) -> Mapping[str, Pool]:
    """The pools of a template about a person drawn by `World.person`: "surname", then `more`."""
    return MappingProxyType({"surname": SURNAMES, **more})


def rid(rng: random.Random, prefix: str) -> str:
    """A random row id: nothing about a target row's id can be guessed from the template."""
    return f"{prefix}{rng.randrange(10_000, 99_999)}"


class World:
    """Builds one instance's rows: people with shared first names, places, products, and so on."""

    def __init__(self, rng: random.Random, split: Split) -> None:
        self.rng = rng
        self.split = split
        self._surnames = list(SURNAMES.values(split))
        rng.shuffle(self._surnames)
        self._used: set[str] = set()

    def person(self, first: str | None = None) -> str:
        """A fresh full name, never one already used: first names come from the split's pool of
        the tool family (shared by namesakes), surnames from this kit's."""
        for surname in self._surnames:
            name = f"{first or self.rng.choice(FIRST.values(self.split))} {surname}"
            if name not in self._used:
                self._used.add(name)
                return name
        raise ValueError("ran out of surnames for this split")

    def phone(self) -> str:
        return f"+1-555-02{self.rng.randrange(100):02d}-{self.rng.randrange(10000):04d}"

    def contact(self, name: str, **extra: Any) -> dict[str, Any]:
        first, _, last = name.partition(" ")
        return {"id": rid(self.rng, "ct"), "name": name, "phone": self.phone(),
                "email": f"{first.lower()}.{last.lower()}@mail.test", "company": "",
                "starred": False, **extra}

    def pick(self, pool: Pool, k: int = 1) -> list[Any]:
        return self.rng.sample(list(pool.values(self.split)), k)


def contact_named(before: Any, name: str) -> dict[str, Any]:
    """The contact row called `name` in a state (the checker's view before the episode)."""
    return next(r for r in before.rows("contacts", "contacts") if r["name"] == name)


class ContactPair:
    """Mixin for templates about one contact who shares a first name with another: the goal
    names them by first name and company, so only the company tells them apart."""

    def people(self, rng: random.Random, split: Any) -> dict[str, Any]:
        """The params: person (full name), surname, first, company, namesake, other_company."""
        world = World(rng, split)
        person = world.person()
        company, other_company = rng.sample(COMPANIES, 2)
        return {"person": person, "surname": person.split()[1], "first": person.split()[0],
                "company": company,
                "namesake": world.person(person.split()[0]), "other_company": other_company}

    def contacts(self, p: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
        """The two contact rows (person and namesake, each with their company), shuffled."""
        world = World(rng, "train")
        rows = [world.contact(p["person"], company=p["company"]),
                world.contact(p["namesake"], company=p["other_company"])]
        rng.shuffle(rows)
        return rows

    contact = staticmethod(contact_named)


# ---- oracle helpers (observations only) --------------------------------------------------

def hits(observation: Observation) -> Any:
    """The value of the last result, or None when it failed."""
    result = observation.result
    return result.value if result is not None and result.ok else None


def rows_of(observation: Observation) -> list[dict[str, Any]]:
    """The rows a search or list returned (lists, or {'items': [...]})."""
    value = hits(observation)
    if isinstance(value, dict) and isinstance(value.get("items"), list):
        value = value["items"]
    return [r for r in value if isinstance(r, dict)] if isinstance(value, list) else []


def row_where(rows: Iterable[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    """The one row whose fields equal `fields` (case-insensitive for text); the oracle fails
    loudly when the observation does not show it (no fallback to params)."""
    found = [r for r in rows if all(str(r.get(k, "")).casefold() == str(v).casefold()
                                    for k, v in fields.items())]
    if len(found) != 1:
        raise LookupError(f"expected one row with {fields}, the observation shows {len(found)}")
    return found[0]


def memory_value(observation: Observation, key: str | None = None) -> Any:
    """The value memory returned: of `key` among query hits, or of a read by key."""
    value = hits(observation)
    if value is None or value == {}:
        raise LookupError(f"memory returned nothing for {key!r}")
    if not isinstance(value, dict):
        raise TypeError(f"memory returned {type(value).__name__}, not entries")
    if "key" in value and "value" in value and (key is None or value["key"] == key):
        return value["value"]
    if key is None or key not in value:
        raise LookupError(f"memory hits {sorted(value)} do not include {key!r}")
    return value[key]


_COUNT = re.compile(r"^\s*(\d+)\s*x\s*(.+?)\s*$")


def parse_count(text: str) -> tuple[int, str]:
    """'2 x Oat milk 1L' → (2, 'Oat milk 1L')."""
    match = _COUNT.match(text)
    if not match:
        raise LookupError(f"cannot read a count from {text!r}")
    return int(match.group(1)), match.group(2)


# Titles of the everyday notes every instance's phone also holds (clutter, never a target).
_CLUTTER = ("Shopping list", "Ideas", "Gift ideas", "Books to read", "Packing", "Quotes",
            "Garden", "Recipes to try", "Wi-Fi codes", "Birthday plans")


class Cluttered:
    """Mixin for templates: every instance's phone also holds a few everyday notes drawn per
    instance (how many, which, what they say), so no two instances start from the same phone
    even when their goals coincide. The notes are never a target and never change."""

    def generate(self, split: Any, i: int, suite_seed: int) -> Any:
        task = super().generate(split, i, suite_seed)  # type: ignore[misc]
        rng = random.Random(f"clutter:{task.seed}")
        notes = [{"id": rid(rng, "nt"), "title": title, "folder": "Personal", "pinned": False,
                  "body": f"{rng.randint(2, 9)} items, last edited {rng.randint(1, 28)} Nov"}
                 for title in rng.sample(_CLUTTER, rng.randint(2, 4))]
        state = dict(task.initial_state)
        app = dict(state.get("notes") or {})
        app["notes"] = [*app.get("notes", []), *notes]
        state["notes"] = app
        params = {**task.params, "_clutter": [f"{n['title']}: {n['body']}" for n in notes]}
        return task.model_copy(update={"initial_state": state, "params": params})


def _schema_of(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, list):
        return {"type": "array"}
    if isinstance(value, dict):
        return {"type": "object"}
    return {"type": "string"}


def derived_parameters(template: Any) -> dict[str, Any]:
    """The JSON Schema of a template's parameters, read off a generated instance (so it always
    names exactly the parameters the template generates)."""
    params = template.generate(template.splits()[0], 0, 0).params
    return {"type": "object", "properties": {k: _schema_of(v) for k, v in params.items()},
            "required": sorted(params)}
