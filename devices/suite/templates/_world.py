"""Per-instance worlds for the tool family: random ids, varied rows, distractors, and oracle helpers.

A `WorldTemplate` builds each instance from a `World`: every row it adds gets a random id,
people come with namesakes (same first name), and values are drawn from the split's own
pool. Parameters whose name starts with "_" are for the checker only: the oracle gets the
intent (who "my sister" is, what to set) without them and must read every id and value it
needs from observations, so a broken lookup tool makes it fail.

`World` has one builder per app row (email, text, note, product, order, flight, ...) that
writes the row's fields in the app's order, and the oracle helpers at the end (find the person
with a relation, the latest or next row, a day's events, the bookings ahead, the last order, the
cheapest offer) are the lookups the tool templates share.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from devices.protocol import TaskInstance
from devices.suite.diff import Allow
from devices.suite.pools import Pool
from devices.suite.seeding import instance_index, instance_rng, instance_seed
from devices.suite.template import Observe, OracleScript, SplitError, Template, catalogue_apps
from devices.suite.templates._kit import call, finish, result_value
from schemas.actions import Click, OpenApp
from schemas.observations import Observation
from schemas.tasks import Split

__all__ = [
    "CART",
    "EMAIL_READ",
    "FIRST",
    "LAST",
    "RELATIONS",
    "STOCK",
    "TEXT_READ",
    "WEEKDAYS",
    "World",
    "WorldTemplate",
    "find_rows",
    "lookup",
    "one",
    "tap",
    "weekday_name",
]

# Names, split three ways; first names are shared by several people of one world (namesakes).
FIRST = Pool(
    ("Priya", "Tomasz", "Ines", "Kwame", "Hana", "Lukas", "Amara", "Diego", "Freya", "Ravi", "Sofia",
     "Jonah", "Mira", "Anders", "Chloe", "Tariq"),
    ("Noor", "Mateo", "Yuki", "Elif", "Oskar", "Zanele", "Bruno", "Leila", "Kofi", "Ingrid"),
    ("Sanne", "Rafael", "Aiko", "Malik", "Greta", "Idris", "Lena", "Omar"),
)
LAST = Pool(
    ("Raman", "Kowal", "Duarte", "Mensah", "Sato", "Brandt", "Okonkwo", "Alvarez", "Lindqvist",
     "Iyer", "Marchetti", "Whitlock"),
    ("Haddadi", "Rossetti", "Tanabe", "Yilmaz", "Nyberg", "Dube", "Carvalho", "Farouk"),
    ("Vermeer", "Costa", "Hayashi", "Bakr", "Strand", "Oduya"),
)
# How the user refers to people; shared vocabulary (not split-specific).
RELATIONS = ("sister", "brother", "mom", "dad", "landlord", "dentist", "boss", "coach", "neighbour",
             "babysitter", "plumber", "accountant")
# Allowed side effects: reading an email or a text flips its `read` flag; checkout lowers stock
# and empties the cart.
EMAIL_READ = Allow("email", "emails", kinds=("changed",), fields=("read",))
TEXT_READ = Allow("messages", "messages", kinds=("changed",), fields=("read",))
STOCK = Allow("shopping", "products", kinds=("changed",), fields=("stock",))
CART = Allow("shopping", "cart")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
# Instances start on a random day in this window, at 08:00 UTC, so relative dates vary.
_FIRST_DAY = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)
_DAYS_SPAN = 60

Row = dict[str, Any]


def weekday_name(date: str) -> str:
    return WEEKDAYS[datetime.strptime(date, "%Y-%m-%d").weekday()]


class World:
    """The rows one instance adds to the default world, with random ids and a random start day."""

    def __init__(self, rng: random.Random, split: Split, index: int = 0, order_seed: str = "") -> None:
        self.rng = rng
        self.split = split
        # The instance number and a seed shared by every instance of this template and split:
        # `nth` walks one fixed permutation of a product, so instances 0..n-1 never repeat it.
        self.index = index
        self.order_seed = order_seed
        self.now = _FIRST_DAY + timedelta(days=rng.randrange(_DAYS_SPAN))
        self.tables: dict[str, dict[str, list[Row]]] = {}
        self.settings: dict[str, Any] = {}
        self._ids: set[str] = set()
        self._names: set[str] = set()
        # (pool, value) for every pooled draw, for the leakage check.
        self.drawn: list[tuple[Pool, Any]] = []

    # ---- values --------------------------------------------------------------------------
    def draw(self, pool: Pool, k: int | None = None) -> Any:
        """One value (or k distinct values) of `pool` for this split."""
        values = [pool.pick(self.rng, self.split)] if k is None else pool.sample(self.rng, self.split, k)
        self.drawn.extend((pool, v) for v in values)
        return values[0] if k is None else values

    def nth(self, *options: Pool | Sequence[Any]) -> tuple[Any, ...]:
        """The index-th element of a fixed shuffle of the product of `options` (pools give their
        split's values): distinct for the first len(product) instances of a split."""
        lists = [list(o.values(self.split)) if isinstance(o, Pool) else list(o) for o in options]
        combos = list(itertools.product(*lists))
        random.Random(f"{self.order_seed}:{len(combos)}").shuffle(combos)
        combo = combos[self.index % len(combos)]
        self.drawn.extend((o, v) for o, v in zip(options, combo, strict=True) if isinstance(o, Pool))
        return combo

    def pick(self, values: Iterable[Any], k: int | None = None) -> Any:
        seq = list(values)
        return self.rng.choice(seq) if k is None else self.rng.sample(seq, k)

    def other(self, pool: Pool, than: Any, k: int | None = None) -> Any:
        """One value (or k) of `pool`'s split values other than `than`, for a distractor (not traced)."""
        return self.pick([v for v in pool.values(self.split) if v != than], k)

    def money(self, low: float, high: float) -> float:
        return round(self.rng.uniform(low, high), 2)

    def distinct_money(self, low: float, high: float, k: int) -> list[float]:
        """`k` different prices in rising order, so "the cheapest" always names one offer (two
        draws rounding to the same cent made the oracle itself miss a tie)."""
        prices: set[float] = set()
        while len(prices) < k:
            prices.add(self.money(low, high))
        return sorted(prices)

    def day(self, offset: int) -> str:
        """The date `offset` days from the start day (YYYY-MM-DD)."""
        return (self.now + timedelta(days=offset)).strftime("%Y-%m-%d")

    @property
    def today(self) -> str:
        return self.day(0)

    def next_weekday(self, weekday: int) -> str:
        """The date of the next given weekday (0 = Monday) strictly after today."""
        ahead = (weekday - self.now.weekday() - 1) % 7 + 1
        return self.day(ahead)

    def some_weekday(self) -> str:
        """The date of a random weekday 1..7 days ahead."""
        return self.next_weekday(self.rng.randrange(7))

    @property
    def clock_ms(self) -> int:
        return int(self.now.timestamp() * 1000)

    def phone(self) -> str:
        return f"+1-555-01{self.rng.randrange(100):02d}-{self.rng.randrange(10000):04d}"

    # ---- rows ----------------------------------------------------------------------------
    def rid(self, prefix: str) -> str:
        while True:
            candidate = f"{prefix}{self.rng.randrange(16 ** 5):05x}"
            if candidate not in self._ids:
                self._ids.add(candidate)
                return candidate

    def add(self, app: str, table: str, prefix: str, **fields: Any) -> Row:
        row = {"id": self.rid(prefix), **fields}
        self.tables.setdefault(app, {}).setdefault(table, []).append(row)
        return row

    def shuffle(self) -> None:
        """Shuffles every table's rows so the target is not always first or last."""
        for tables in self.tables.values():
            for rows in tables.values():
                self.rng.shuffle(rows)

    def person_name(self, first: str | None = None) -> str:
        """A full name not used yet in this world (namesakes share `first`)."""
        for _ in range(200):
            name = f"{first or self.draw(FIRST)} {self.draw(LAST)}"
            if name not in self._names:
                self._names.add(name)
                return name
        raise ValueError("the name pools are too small for this world")

    def contact(self, name: str | None = None, relation: str = "", **extra: Any) -> Row:
        name = name or self.person_name()
        first, _, last = name.partition(" ")
        return self.add("contacts", "contacts", "ct", name=name, phone=self.phone(),
                        email=f"{first.lower()}.{last.lower()}@mail.example", company="",
                        starred=False, relation=relation, **extra)

    def people(self, target_relation: str, n: int = 3) -> tuple[Row, list[Row]]:
        """A contact with `target_relation`, a namesake without it, and n-1 others with other
        relations; returns (target, everyone)."""
        target = self.contact(relation=target_relation)
        first = target["name"].split()[0]
        namesake = self.contact(self.person_name(first), relation="")
        others = [self.contact(relation=r)
                  for r in self.pick([r for r in RELATIONS if r != target_relation], n - 1)]
        return target, [target, namesake, *others]

    def related(self, n: int = 3, relations: Sequence[str] = RELATIONS) -> tuple[str, Row, list[Row]]:
        """A relation picked from `relations` and `people(relation, n)`: (relation, target, everyone)."""
        relation = self.pick(relations)
        target, everyone = self.people(relation, n)
        return relation, target, everyone

    # ---- app rows (fields in each app's own order) ------------------------------------------
    def email(self, sender: str, subject: str, body: str, received_at: str, *, folder: str = "inbox",
              to: Sequence[str] = ("me@example.com",), read: bool = False, starred: bool = False) -> Row:
        return self.add("email", "emails", "em", folder=folder, sender=sender, to=list(to), subject=subject,
                        body=body, received_at=received_at, read=read, starred=starred)

    def text(self, person: Row, body: str, sent_at: str, *, read: bool = False, direction: str = "in") -> Row:
        """A text between the user and contact row `person` (incoming unless `direction` says "out")."""
        return self.add("messages", "messages", "msg", contact=person["name"], phone=person["phone"],
                        direction=direction, body=body, sent_at=sent_at, read=read)

    def note(self, title: str, body: str, folder: str = "Personal", pinned: bool = False) -> Row:
        return self.add("notes", "notes", "nt", title=title, body=body, folder=folder, pinned=pinned)

    def place(self, name: str, address: str, rating: float, category: str = "place") -> Row:
        return self.add("maps", "places", "pl", name=name, category=category, address=address, rating=rating)

    def photo(self, name: str, album: str, tags: list[str], size_kb: int, created_at: str) -> Row:
        return self.add("files", "files", "f", path=f"/sdcard/{album}/{name}", name=name, kind="photo",
                        album=album, tags=tags, size_kb=size_kb, created_at=created_at)

    def recipe(self, title: str, cuisine: str, minutes: int, ingredients: list[str], servings: int = 4,
               favorite: bool = False) -> Row:
        return self.add("recipes", "recipes", "rc", title=title, cuisine=cuisine, minutes=minutes, servings=servings,
                        ingredients=ingredients, favorite=favorite, rating=0)

    def track(self, title: str, artist: str, album: str, minutes: int) -> Row:
        return self.add("music", "tracks", "tk", title=title, artist=artist, album=album, minutes=minutes,
                        liked=False)

    def payee(self, name: str, iban: str) -> Row:
        return self.add("bank", "payees", "py", name=name, iban=iban)

    def product(self, name: str, price: float, stock: int, category: str = "misc") -> Row:
        return self.add("shopping", "products", "pr", name=name, category=category, price=price, stock=stock)

    def grocery_offers(self, ingredient: str, cheap: str, dear: str, stock: int) -> Row:
        """Three offers of `ingredient` at rising prices: "<Name> (<cheap>)" out of stock, "<Name>" and
        "<Name> (<dear>)" with `stock`; returns the middle one, the cheapest in-stock offer."""
        name = ingredient.capitalize()
        prices = self.distinct_money(1, 12, 3)
        self.product(f"{name} ({cheap})", prices[0], 0, category="grocery")
        best = self.product(name, prices[1], stock, category="grocery")
        self.product(f"{name} ({dear})", prices[2], stock, category="grocery")
        return best

    def city_forecast(self, name: str, span: Iterable[int], rain: Callable[[str], bool],
                      highs: Mapping[str, int] | None = None, saved: bool = False) -> Row:
        """A weather city with a day of forecast per offset in `span`; `rain(date)` says which days
        rain and `highs` fixes some days' highs (a random high is drawn for every day anyway)."""
        days = []
        for k in span:
            date = self.day(k)
            wet = rain(date)
            days.append({"date": date, "high": (highs or {}).get(date, self.rng.randint(12, 24)),
                         "low": self.rng.randint(2, 10), "condition": "rain" if wet else self.pick(["sunny", "cloudy"]),
                         "rain_pct": self.rng.randint(60, 95) if wet else self.rng.randint(0, 30)})
        return self.add("weather", "cities", "wc", name=name, saved=saved, days=days)

    def order(self, items: list[dict[str, Any]], total: float, address: str, placed_at: str,
              status: str = "delivered") -> Row:
        return self.add("shopping", "orders", "or", items=items, total=total, address=address, status=status,
                        placed_at=placed_at)

    def flight(self, origin: str, destination: str, date: str, depart: str, arrive: str, price: float,
               airline: str) -> Row:
        return self.add("travel", "flights", "fl", origin=origin, destination=destination, date=date,
                        depart=depart, arrive=arrive, price=price, airline=airline)

    def event(self, title: str, start: str, end: str, location: str = "", attendees: list[str] | None = None,
              notes: str = "") -> Row:
        return self.add("calendar", "events", "ev", title=title, start=start, end=end, location=location,
                        attendees=attendees if attendees is not None else [], notes=notes)

    def playlist(self, name: str, track_ids: list[str]) -> Row:
        return self.add("music", "playlists", "pls", name=name, track_ids=track_ids)

    def hotel(self, name: str, city: str, price_per_night: float, rating: float) -> Row:
        return self.add("travel", "hotels", "ho", name=name, city=city, price_per_night=price_per_night,
                        rating=rating)

    def hotel_booking(self, hotel_id: str, nights: int, check_in: str, total: float,
                      status: str = "confirmed") -> Row:
        return self.add("travel", "bookings", "bk", kind="hotel", ref_id=hotel_id, passengers=1, nights=nights,
                        check_in=check_in, total=total, status=status)

    def flight_booking(self, flight: Row) -> Row:
        """A confirmed booking of `flight` for one passenger, on its date, at its price."""
        return self.add("travel", "bookings", "bk", kind="flight", ref_id=flight["id"], passengers=1, nights=0,
                        check_in=flight["date"], total=flight["price"], status="confirmed")

    def overlay(self) -> dict[str, Any]:
        out: dict[str, Any] = {app: {t: list(rows) for t, rows in tables.items()}
                               for app, tables in self.tables.items()}
        if self.settings:
            out["settings"] = dict(self.settings)
        return out


class WorldTemplate(Template):
    """A tool template built on a `World`: `build(w)` returns the params, `solve` is the oracle."""

    family = "tool"
    checker = "final_state"
    needs_lookup: ClassVar[bool] = True
    # Whether the oracle must use the GUI (no tool covers a step).
    gui: ClassVar[bool] = False
    # Read tools the oracle depends on (breaking any one must make it fail).
    lookups: ClassVar[tuple[str, ...]] = ()

    def build(self, w: World) -> dict[str, Any]:
        raise NotImplementedError

    def solve(self, p: dict[str, Any], observe: Observe) -> OracleScript:
        raise NotImplementedError

    def generate(self, split: Split, i: int, suite_seed: int) -> TaskInstance:
        return self.trace(split, i, suite_seed)[0]

    def trace(self, split: Split, i: int, suite_seed: int) -> tuple[TaskInstance, list[tuple[Pool, Any]]]:
        """The instance and every pooled (pool, value) drawn to build it."""
        if split not in self.splits():
            raise SplitError(f"template {self.name} is held out for test and has no {split} "
                             "instances; pick a template from the train or dev list")
        index = instance_index(split, i)
        seed = instance_seed(suite_seed, self.name, index)
        w = World(instance_rng(seed), split, i, f"{suite_seed}:{self.name}:{split}")
        params = self.build(w)
        w.shuffle()
        self.check_pools(params, split)
        task = TaskInstance(
            task_id=f"{self.name}-{split}-{i:05d}-{seed & 0xFFFFFFFF:08x}",
            template=self.name, family=self.family, split=split, index=index, seed=seed,
            params=params, goal=self.goal(params), initial_state=w.overlay(),
            start_clock_ms=w.clock_ms, max_steps=self.max_steps,
            apps=catalogue_apps(self.apps, seed, self.distractor_apps),
            tier=self.tier)
        return task, w.drawn

    def initial_state(self, params: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        raise NotImplementedError("world templates build their state in generate()")

    def oracle(self, params: dict[str, Any], observe: Observe) -> OracleScript:
        intent = {k: v for k, v in params.items() if not k.startswith("_")}
        yield from self.solve(intent, observe)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "gui": self.gui, "lookups": list(self.lookups)}


# ---- oracle helpers ------------------------------------------------------------------------------

def lookup(observe: Observe, action: Any) -> Generator[Any, None, Any]:
    """Yields `action` and returns the value its observation carries (None on failure)."""
    yield action
    return result_value(observe())


def find_rows(value: Any, **where: Any) -> list[Row]:
    """Rows of a tool result (a list of rows or a row) whose fields equal `where` (case-blind)."""
    rows = value if isinstance(value, list) else [value] if isinstance(value, dict) else []
    out = []
    for row in rows:
        if isinstance(row, dict) and all(
                str(row.get(k, "")).casefold() == str(v).casefold() for k, v in where.items()):
            out.append(row)
    return out


def one(value: Any, **where: Any) -> Row | None:
    """The single row of a result matching `where`, or None when there is not exactly one."""
    found = find_rows(value, **where)
    return found[0] if len(found) == 1 else None


def tap(obs: Observation, *, text: str | None = None, startswith: str | None = None,
        rid: str | None = None) -> Click | None:
    """A click on the first element with this text (or prefix, or resource-id suffix)."""
    for i, e in enumerate(obs.screen):
        if ((text is not None and e.text == text)
                or (startswith is not None and (e.text or "").startswith(startswith))
                or (rid is not None and (e.resource_id or "").endswith(rid))):
            return Click(index=i)
    return None


def screen_text(obs: Observation, rid: str) -> str | None:
    for e in obs.screen:
        if (e.resource_id or "").endswith(rid):
            return e.text
    return None


def gui_steps(observe: Observe, app: str,
              steps: Iterable[Mapping[str, str] | Callable[[Observation], Any]]) -> Generator[Any, None, bool]:
    """Opens `app`, then taps each step ({'text'|'startswith'|'rid': ...}); False if one is missing."""
    yield OpenApp(app_name=app)
    for step in steps:
        obs = observe()
        action = step(obs) if callable(step) else tap(obs, **step)
        if action is None:
            return False
        yield action
    return True


__all__ += ["call", "finish", "gui_steps", "screen_text"]


def now_of(observe: Observe) -> datetime:
    """The device clock of the latest observation."""
    return datetime.fromtimestamp(observe().clock_ms / 1000, UTC)


def shift(value: str, minutes: int) -> str:
    """'HH:MM' or 'YYYY-MM-DDTHH:MM' moved by `minutes` (same format back)."""
    if len(value) == 5:
        t = datetime.strptime(value, "%H:%M") + timedelta(minutes=minutes)
        return t.strftime("%H:%M")
    return (datetime.strptime(value, "%Y-%m-%dT%H:%M") + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M")


def date_from(now: datetime, offset: int = 0) -> str:
    """The date `offset` days from `now` (YYYY-MM-DD)."""
    return (now + timedelta(days=offset)).strftime("%Y-%m-%d")


def day_of(observe: Observe, offset: int = 0) -> str:
    """The date `offset` days from the device's today (YYYY-MM-DD)."""
    return date_from(now_of(observe), offset)


def minute_of(observe: Observe) -> str:
    """The device clock to the minute (YYYY-MM-DDTHH:MM)."""
    return now_of(observe).strftime("%Y-%m-%dT%H:%M")


def next_weekday_from(now: datetime, weekday: int) -> str:
    ahead = (weekday - now.weekday() - 1) % 7 + 1
    return date_from(now, ahead)


# How goals say a duration, and the minutes they mean.
DURATIONS = {"half an hour": 30, "a quarter of an hour": 15, "three quarters of an hour": 45,
             "an hour and a half": 90, "twenty minutes": 20, "an hour": 60, "ten minutes": 10,
             "forty minutes": 40, "fifty minutes": 50, "an hour and a quarter": 75, "two hours": 120,
             "five minutes": 5, "twenty-five minutes": 25}


__all__ += ["DURATIONS", "date_from", "day_of", "minute_of", "next_weekday_from", "now_of", "shift"]


def weekday_date(observe: Observe, weekday: str) -> str:
    """The date of the next `weekday` (a name in WEEKDAYS) strictly after the device's today."""
    return next_weekday_from(now_of(observe), WEEKDAYS.index(weekday))


def person_by_relation(observe: Observe, relation: str) -> Generator[Any, None, Row | None]:
    """Searches the contacts for `relation`; returns the one contact with that relation, or None."""
    rows = yield from lookup(observe, call("contacts.search", query=relation))
    return one(rows, relation=relation)


def bookings_ahead(observe: Observe, kind: str) -> Generator[Any, None, list[Row] | None]:
    """The confirmed `kind` bookings from the device's today on, by check-in (None when the lookup
    fails)."""
    today = day_of(observe)
    rows = yield from lookup(observe, call("travel.list_bookings"))
    if rows is None:
        return None
    found = sorted(find_rows(rows, kind=kind, status="confirmed"), key=lambda r: r["check_in"])
    return [booking for booking in found if booking["check_in"] >= today]


def events_on(observe: Observe, weekday: str) -> Generator[Any, None, tuple[str, list[Row]]]:
    """The date of the next `weekday` and the calendar's events that day."""
    date = weekday_date(observe, weekday)
    events = yield from lookup(observe, call("calendar.list_events", date=date))
    return date, find_rows(events)


def event_titled_on(observe: Observe, title: str, weekday: str) -> Generator[Any, None, Row | None]:
    """The one event called `title` on the next `weekday` (None unless exactly one)."""
    date = weekday_date(observe, weekday)
    rows = yield from lookup(observe, call("calendar.search", query=title))
    hits = [r for r in find_rows(rows, title=title) if r["start"].startswith(date)]
    return hits[0] if len(hits) == 1 else None


def next_event_with(observe: Observe, relation: str) -> Generator[Any, None, Row | None]:
    """The contact with `relation`, then the first of their events not yet started (None if either
    is missing)."""
    person = yield from person_by_relation(observe, relation)
    if not person:
        return None
    rows = yield from lookup(observe, call("calendar.search", query=person["name"]))
    return earliest_from(rows, "start", minute_of(observe))


def note_titled(observe: Observe, title: str) -> Generator[Any, None, Row | None]:
    """Searches the notes for `title`; returns the one note with exactly that title, or None."""
    rows = yield from lookup(observe, call("notes.search", query=title))
    return one(rows, title=title)


def latest(value: Any, key: str, /, **where: Any) -> Row | None:
    """The row of a result matching `where` with the greatest `key` (the last of equals), or None."""
    found = sorted(find_rows(value, **where), key=lambda r: r[key])
    return found[-1] if found else None


def earliest_from(value: Any, key: str, since: str, /, **where: Any) -> Row | None:
    """The row of a result matching `where` with the smallest `key` not before `since`, or None."""
    found = sorted((r for r in find_rows(value, **where) if r[key] >= since), key=lambda r: r[key])
    return found[0] if found else None


def tagged(value: Any, tag: str) -> list[Row]:
    """The rows of a result (files, photos) whose tags include `tag`."""
    return [row for row in find_rows(value) if tag in row["tags"]]


def last_order(value: Any) -> Row | None:
    """The most recently placed order of a `shopping.list_orders` result (undated ones skipped)."""
    return latest([r for r in find_rows(value) if r.get("placed_at")], "placed_at")


def events_ahead(observe: Observe, prefix: str, days: int) -> Generator[Any, None, list[str]]:
    """Searches the calendar for `prefix` ("Cook:"); returns <what> of each event titled
    "<prefix> <what>" on one of the next `days` days (not today)."""
    now = now_of(observe)
    today, end = date_from(now), date_from(now, days)
    events = yield from lookup(observe, call("calendar.search", query=prefix))
    return [event["title"].removeprefix(f"{prefix} ") for event in find_rows(events)
            if today < event["start"][:10] <= end and event["title"].startswith(f"{prefix} ")]


def cart_cheapest(observe: Observe, items: Iterable[str], quantity: int) -> Generator[Any, None, None]:
    """For each item, searches the in-stock offers and puts `quantity` of the cheapest in the cart;
    stops at the first item with no offer."""
    for item in items:
        offers = yield from lookup(observe, call("shopping.search", query=item, in_stock=True))
        if not offers:
            return
        best = cheapest(offers)
        yield call("shopping.add_to_cart", product_id=best["id"], quantity=quantity)


def best_hotel_under(observe: Observe, city: str, cap: float) -> Generator[Any, None, Row | None]:
    """Searches the hotels of `city`; returns the best-rated one under `cap` a night (the first of
    equals), or None."""
    hotels = yield from lookup(observe, call("travel.search_hotels", city=city))
    under = [h for h in find_rows(hotels) if h["price_per_night"] < cap]
    return max(under, key=lambda h: h["rating"]) if under else None


def balance_of(account: str, *others: str) -> Allow:
    """Allows the balances of these bank accounts to change (a payment or transfer moves money)."""
    return Allow("bank", "accounts", ids=(account, *others), kinds=("changed",), fields=("balance",))


def cheapest(value: Any) -> Row:
    """The lowest-priced row of a non-empty result (the first of equals)."""
    return min(find_rows(value), key=lambda r: r["price"])


__all__ += ["balance_of", "best_hotel_under", "bookings_ahead", "cart_cheapest", "cheapest", "earliest_from",
            "event_titled_on", "events_ahead", "events_on", "last_order", "latest", "next_event_with",
            "note_titled", "person_by_relation", "tagged", "weekday_date"]
