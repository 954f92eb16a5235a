"""Parameter-value pools: train, dev and test each draw from their own, disjoint values."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from schemas.tasks import Split

__all__ = [
    "ALARM_LABELS",
    "ALBUMS",
    "CODES",
    "COMPANIES",
    "DAYS",
    "EMAIL_SUBJECTS",
    "EVENT_TITLES",
    "FOLDERS",
    "MINUTES",
    "NOTE_TOPICS",
    "PEOPLE",
    "PHRASES",
    "PLACES",
    "PRODUCTS",
    "SETTING_LEVELS",
    "STREETS",
    "SWITCHES",
    "TAGS",
    "TASK_DATES",
    "TIMES",
    "Pool",
    "all_pools",
]

# Every pool ever built, so the leakage check can scan instances for values of other splits.
_ALL: list[Pool] = []


def all_pools() -> tuple[Pool, ...]:
    return tuple(_ALL)


@dataclass(frozen=True)
class Pool:
    """Values for one parameter; train, dev and test values are pairwise disjoint.

    `dev` may be left out (the older two-way form): then every fourth train value (or the
    last of fewer than four) is moved to dev, so dev still never shares a value with train.
    """

    train: tuple[Any, ...]
    test: tuple[Any, ...]
    dev: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        if not self.train or not self.test:
            raise ValueError("a pool needs at least one train value and one test value")
        if not self.dev:
            if len(self.train) < 2:
                raise ValueError("a two-way pool needs at least two train values to give dev its own")
            moved = set(range(min(3, len(self.train) - 1), len(self.train), 4))
            object.__setattr__(self, "dev", tuple(v for i, v in enumerate(self.train) if i in moved))
            object.__setattr__(self, "train", tuple(v for i, v in enumerate(self.train) if i not in moved))
        for a, b, names in ((self.train, self.test, "train and test"), (self.train, self.dev, "train and dev"),
                            (self.dev, self.test, "dev and test")):
            overlap = set(map(_key, a)) & set(map(_key, b))
            if overlap:
                raise ValueError(f"pool values appear in both {names}: {sorted(overlap)}")
        _ALL.append(self)

    def values(self, split: Split) -> tuple[Any, ...]:
        """The values `split` may use: each split has its own."""
        return {"train": self.train, "dev": self.dev, "test": self.test}[split]

    def pick(self, rng: random.Random, split: Split) -> Any:
        return rng.choice(self.values(split))

    def sample(self, rng: random.Random, split: Split, k: int) -> list[Any]:
        return rng.sample(self.values(split), k)

    def contains(self, value: Any, split: Split) -> bool:
        return _key(value) in {_key(v) for v in self.values(split)}


def _key(value: Any) -> str:
    """A comparable key for a pool value (tuples and JSON lists of strings compare equal)."""
    if isinstance(value, list):
        value = tuple(value)
    return repr(value).casefold()


def _pool(train: str, test: str, dev: str = "") -> Pool:
    """A pool of strings given as '|'-separated lists (keeps the tables below readable)."""
    return Pool(tuple(train.split("|")), tuple(test.split("|")), tuple(dev.split("|")) if dev else ())


# None of these values appears in the SimPhone default world (devices/sim/world.py), so a
# task's target is always a row the template itself put there.

# People the tasks are about.
PEOPLE = _pool(
    "Priya Raman|Tomasz Kowal|Ines Duarte|Kwame Mensah|Hana Sato|Lukas Brandt|Amara Okafor"
    "|Diego Alvarez|Freya Lindqvist|Ravi Iyer|Sofia Marchetti|Jonah Whitlock",
    "Noor Haddad|Mateo Rossi|Yuki Tanabe|Elif Yilmaz|Oskar Nyberg|Zanele Dube"
    "|Bruno Carvalho|Leila Farouk",
)
COMPANIES = _pool("Acme Robotics|Bluefin Labs|Cobalt Health|Dunmore Legal|Evergreen Bank",
                  "Fjord Analytics|Granite Media|Halcyon Air")
NOTE_TOPICS = _pool(
    "Packing list|Book club picks|Garden plan|Sprint retro|Recipe ideas|Budget review",
    "Tax checklist|Wedding toasts|Bike repair|Quarterly goals",
)
ALARM_LABELS = _pool("Gym|Meds|Standup|School run|Yoga|Call mom",
                     "Bread out|Plant watering|Team sync|Pickup laundry")
# HH:MM values; the two tuples share no time.
TIMES = _pool("06:15|06:45|07:05|07:35|08:10|09:25|13:40|17:55|21:20",
              "05:50|06:20|07:50|10:05|14:35|18:25")
PLACES = _pool(
    "Bellini Trattoria|Copper Kettle Cafe|Harbor Climbing Gym|Juniper Books|Maple Dental"
    "|Northside Pharmacy|Orchard Market|Riverside Yoga",
    "Saffron House|Tidewater Bakery|Summit Bike Shop|Lantern Cinema|Kestrel Vet Clinic",
)
PRODUCTS = _pool(
    "Running socks|French press|Phone stand|Notebook set|Travel adapter|Bamboo cutlery"
    "|Wool beanie|Ceramic mug",
    "Bike light|Tea kettle|Wool scarf|Camping mug|Book stand",
)
EVENT_TITLES = _pool(
    "Dentist checkup|Project kickoff|Parent meeting|Lunch with Sam|Piano lesson|Car service",
    "Visa interview|Roof inspection|Board review|Vet appointment",
)
CODES = _pool("4821|7390|1156|6642|2087|9314|5530|3871", "8246|1709|6093|2418|7765")
STREETS = _pool("14 Alder Street|48 Harbor Road|7 Quarry Lane|230 Mill Avenue|19 Birch Court",
                "5 Lantern Way|88 Cedar Row|301 Ferry Street")
ALBUMS = _pool("Holiday|Receipts|Family|Work|Hiking", "Concerts|Renovation|Pets")
TAGS = _pool("favorite|todo|archive|print|keepsake", "urgent|keep|review")
FOLDERS = _pool("Personal|Work|Ideas|Travel", "Health|Finance|Projects")
PHRASES = _pool(
    "running ten minutes late|see you at the entrance|the keys are under the mat"
    "|bring the charger please|meeting moved to Friday|dinner is at seven",
    "call me when you land|the parcel is at the door|parking is on level two|tickets are booked",
)
EMAIL_SUBJECTS = _pool("Quarterly report|Invoice 2291|Trip itinerary|Lease renewal|Offsite agenda",
                       "Insurance claim|Conference badge|Tuition receipt")
# Numeric settings levels, as strings so the pool stays one type; the splits share none.
SETTING_LEVELS = _pool("15|25|35|45|55|65|85", "20|40|60|80")
# Task dates: train/dev in the first full week of January 2026, test in the second.
TASK_DATES = _pool("2026-01-05|2026-01-06|2026-01-07|2026-01-08|2026-01-09",
                   "2026-01-12|2026-01-13|2026-01-14|2026-01-15")
# Minutes for timers and slots; disjoint sets.
MINUTES = Pool((5, 10, 20, 30, 45), (15, 25, 40, 50))
# On/off switches that start off in the default world.
SWITCHES = _pool("bluetooth|dark_mode", "do_not_disturb|battery_saver")
DAYS = Pool((("mon", "wed", "fri"), ("tue", "thu"), ("sat", "sun"), ("mon", "tue", "wed")),
            (("wed", "sat"), ("thu", "fri", "sun")))
