"""Genuine chains over rows: each template loops over several rows a first lookup finds, and for
every row makes two or more dependent lookups (the row's attendee → their contact, its place →
that place's address, its flight → the forecast where it lands) before it writes. The writes the
goal asks for are checked one by one, each against the value its own chain implies and none of
the other rows' values.

- `meeting_addresses_to_attendees`: a day's meetings → each attendee's contact and each venue's
  address (a look-alike "Annex" is rated higher) → a text and a leave-by reminder per meeting.
- `late_for_todays_meetings`: today's meetings not started yet → each attendee's contact → a
  text, and the meeting pushed back.
- `unpaid_invoices_from_relation`: who "my landlord" is → their invoice emails → which are paid
  already (the bank's payment memos) → pay, reply and star each unpaid one.
- `flight_packing_reminders`: upcoming flight bookings → each flight → the forecast where and when
  it lands → a packing reminder the day before, and a text with the landing time.
- `hotels_for_upcoming_flights`: upcoming flight bookings → each flight → the hotels of its city
  → book the best-rated under the cap from the landing day.
- `list_note_to_relation`: the list note (not its old copy) → the cheapest in-stock offer of each
  item → the relation's address (not the namesake's) → one order.
- `cook_plan_to_cart`: the "Cook:" dinners of the next week → each recipe (not its look-alike)
  → the cheapest in-stock offer of each ingredient.
- `pay_back_lenders`: this week's texts saying I owe money → each lender's payee (not a
  namesake's) → pay and text each.
- `event_forecast_notes`: a day's events → each venue's city (from its address) → that city's
  forecast that day → written into the event's notes.
- `family_forecast_texts`: each named relation → the city they live in → tomorrow's forecast
  there → a text each.
- `conference_travel`: the conferences in the calendar → the cheapest flight the day before each
  → the best-rated hotel under the cap there for the conference's nights.
- `decline_emails_update_events`: emails saying someone can't make an event → that event → drop
  the sender from its guests and answer them.
- `meeting_requests_from_texts`: unread texts proposing a meeting → the sender's contact (email)
  → an event with them at that time, and a reply.
- `party_guests_from_note`: the guest list note → each guest's contact → a text with the venue's
  address, and every guest's email on the party event.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from devices.suite.diff import Add, Update, mentions
from devices.suite.templates._hkit import pool3
from devices.suite.templates._vocab import ACCOUNT_NAMES, CITIES, HOTELS, TIMES3, TOPICS3
from devices.suite.templates._world import (
    CART,
    EMAIL_READ,
    STOCK,
    TEXT_READ,
    World,
    WorldTemplate,
    balance_of,
    best_hotel_under,
    bookings_ahead,
    call,
    cart_cheapest,
    cheapest,
    day_of,
    events_ahead,
    events_on,
    find_rows,
    lookup,
    minute_of,
    one,
    person_by_relation,
    shift,
    weekday_date,
    weekday_name,
)

__all__ = ["TEMPLATES"]

Row = dict[str, Any]

# Values of their own (coined, so none is a word of another pool's split or of the default world).
MEETINGS = pool3("Vendor sync|Roadmap huddle|Hiring debrief|Budget checkpoint|Client walkthrough"
                 "|Safety audit|Offsite planning|Pricing session|Intern check-in|Warehouse tour",
                 "Launch retro|Partner call|Metrics deep dive|Content sync|Ops huddle|Grant debrief"
                 "|Vendor onboarding|Sponsor call|Catering tasting",
                 "Board prep|Legal sync|Quarter close|Donor call|Brand workshop|Press briefing"
                 "|Capacity planning|Tenant forum|Fundraiser prep")
VENUES = pool3("Alder Room|Birch Hall|Cobble Court|Dunlin House|Eyrie Loft|Fennel Works|Gannet Yard"
               "|Hawthorn Suite|Ivybridge Rooms|Yarrow Barn",
               "Ibis Rooms|Jackdaw Loft|Kittiwake Hall|Lapwing House|Merlin Court|Nuthatch Yard"
               "|Avocet Studio|Bittern Lodge|Curlew Works",
               "Nightjar Hall|Osprey House|Plover Rooms|Quail Court|Redstart Loft|Siskin Works"
               "|Teal Suite|Wagtail Studio|Whimbrel Lodge")
GROCERIES = pool3("pearl barley|smoked paprika|oat flakes|kidney beans|basmati rice|coconut milk"
                  "|sesame oil|rolled oats|brown lentils|passata|split peas|rice vinegar|cocoa nibs"
                  "|flaxseed",
                  "buckwheat|miso paste|quinoa|black beans|harissa|soba noodles|capers|bulgur"
                  "|chia seeds|mung beans|nori sheets|ghee|orzo|pesto jar",
                  "freekeh|sumac|polenta|fish sauce|pine nuts|jasmine rice|dried figs|tamarind"
                  "|cannellini beans|za'atar|pearl couscous|tahini paste|dried apricots|wild rice")
MEALS = pool3("Barley pilaf|Paprika stew|Sesame noodles|Lentil cottage pie|Coconut dal|Pea fritters",
              "Miso ramen|Harissa traybake|Quinoa bowls|Bulgur salad|Soba stir-fry",
              "Freekeh salad|Polenta bake|Fig tagine|Tamarind curry|Couscous royale|Wild rice soup")
_STREETS = ("Wren Lane", "Sparrow Street", "Linnet Road", "Finch Avenue", "Starling Close", "Robin Row",
            "Swift Terrace", "Martin Walk", "Pipit Way", "Bunting Place")
_FAMILY = ("mom", "dad", "sister", "brother", "aunt", "uncle", "grandma", "cousin")
# The default world's events fall on 2026-01-02..09: instances start after them.
_CLEAR_FROM = datetime(2026, 1, 11, 8, 0, tzinfo=UTC)


def _pick(rows: Any, **where: Any) -> Row | None:
    """The one row a step wants (exactly these fields); the tests swap it for "the first row"."""
    return one(rows, **where)


def _venue_of(observe: Any, event: Row) -> Any:
    """Sub-script: the place named as `event`'s location (None unless the search has exactly it)."""
    places = yield from lookup(observe, call("maps.search_places", query=event["location"]))
    return _pick(places, name=event["location"])


def _clear(w: World) -> None:
    if w.now < _CLEAR_FROM:
        w.now += timedelta(days=7)


def _address(w: World, used: set[str], city: str = "") -> str:
    while True:
        street = f"{w.rng.randint(2, 199)} {w.pick(_STREETS)}" + (f", {city}" if city else "")
        if street not in used:
            used.add(street)
            return street


def _at(date: str, minutes: int) -> str:
    return f"{date}T{minutes // 60:02d}:{minutes % 60:02d}"


def _person(w: World, **extra: Any) -> tuple[Row, Row]:
    """A contact and a namesake (same first name, other surname, email and phone)."""
    target = w.contact(**extra)
    namesake = w.contact(w.person_name(target["name"].split()[0]), relation="")
    return target, namesake


def _venue(w: World, name: str, used: set[str], city: str = "") -> Row:
    """A place and its look-alike "<name> Annex", rated higher (so it is listed first), elsewhere."""
    rating = round(w.rng.uniform(3.4, 4.3), 1)
    place = w.place(name, _address(w, used, city), rating, category="venue")
    w.place(f"{name} Annex", _address(w, used, w.other(CITIES, city) if city else ""), round(rating + 0.5, 1),
            category="venue")
    return place


def _hours(w: World, n: int, first: int = 9, last: int = 18) -> list[int]:
    """n distinct start minutes of the day, on the hour, in order."""
    return sorted(h * 60 for h in w.rng.sample(range(first, last), n))


def _forecast(w: World, city: str, rainy: set[str] = frozenset(), highs: dict[str, int] | None = None) -> Row:
    """An unsaved city whose forecast rains on the `rainy` dates."""
    return w.city_forecast(city, range(-1, 30), rainy.__contains__, highs)


class _Chain(WorldTemplate):
    """A looping chain: hard, many steps."""

    tier = "hard"
    chain: ClassVar[int] = 2
    max_steps: ClassVar[int] = 60


# ---- calendar, contacts, maps, messages, reminders ---------------------------------------------------

class MeetingAddressesToAttendees(_Chain):
    name = "meeting_addresses_to_attendees"
    apps = ("calendar", "contacts", "maps", "messages", "reminders")
    lookups = ("calendar.list_events", "contacts.search", "maps.search_places")
    goal_template = ("For each of my meetings on {weekday}, text its attendee the street address of the place it "
                     "is at, and remind me {lead} minutes before it starts to leave for it.")

    def build(self, w: World) -> dict[str, Any]:
        _clear(w)
        date = w.some_weekday()
        n = w.rng.randint(6, 7)
        lead = w.pick([15, 20, 30, 45])
        titles = w.draw(MEETINGS, n + 1)
        venues = w.draw(VENUES, n + 1)
        used: set[str] = set()
        texts, reminders, addresses = [], [], []
        for title, venue, start in zip(titles, venues, _hours(w, n), strict=False):
            person, _ = _person(w)
            place = _venue(w, venue, used)
            w.event(title, _at(date, start), _at(date, start + 60), venue, [person["email"]])
            texts.append([person["phone"], place["address"]])
            reminders.append([shift(_at(date, start), -lead), title])
            addresses.append(place["address"])
        other, _ = _person(w)
        _venue(w, venues[-1], used)
        w.event(titles[-1], _at(w.day(8), 600), _at(w.day(8), 660), venues[-1], [other["email"]])
        return {"weekday": weekday_name(date), "lead": lead, "_texts": texts, "_reminders": reminders,
                "_titles": titles, "_addresses": sorted(used)}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        out: list[Any] = [Add("messages", "messages", {"phone": phone, "direction": "out",
                                                       "body": mentions(address, *p["_addresses"])})
                          for phone, address in p["_texts"]]
        out += [Add("reminders", "reminders", {"due": due, "title": mentions(title, *p["_titles"])})
                for due, title in p["_reminders"]]
        return out

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        _, events = yield from events_on(observe, p["weekday"])
        for event in events:
            found = yield from lookup(observe, call("contacts.search", query=event["attendees"][0]))
            person = _pick(found, email=event["attendees"][0])
            place = yield from _venue_of(observe, event)
            if not person or not place:
                return
            yield call("messages.send", phone=person["phone"], body=f"{event['title']}: {place['address']}")
            yield call("reminders.create", title=f"Leave for {event['title']}", due=shift(event["start"], -p["lead"]))


class LateForTodaysMeetings(_Chain):
    name = "late_for_todays_meetings"
    apps = ("calendar", "contacts", "messages")
    lookups = ("calendar.list_events", "contacts.search")
    goal_template = ("I'm running {delay} minutes behind all day. Push each of today's meetings that hasn't "
                     "started yet back by {delay} minutes, and text its attendee that I'll be {delay} minutes late.")

    def build(self, w: World) -> dict[str, Any]:
        _clear(w)
        n = 7
        delay = w.pick([10, 15, 25, 40])
        titles = w.draw(MEETINGS, n + 2)
        venues = w.draw(VENUES, 3)
        texts, moves = [], []
        for title, start in zip(titles, _hours(w, n, 9, 19), strict=False):
            person, _ = _person(w)
            ev = w.event(title, _at(w.today, start), _at(w.today, start + 45), w.pick(venues), [person["email"]])
            texts.append(person["phone"])
            moves.append([ev["id"], shift(ev["start"], delay), shift(ev["end"], delay)])
        early, _ = _person(w)  # already over: 07:00 today
        w.event(titles[-2], _at(w.today, 420), _at(w.today, 465), venues[0], [early["email"]])
        later, _ = _person(w)  # tomorrow
        w.event(titles[-1], _at(w.day(1), 600), _at(w.day(1), 660), venues[1], [later["email"]])
        return {"delay": delay, "_texts": texts, "_moves": moves}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        out: list[Any] = [Update("calendar", "events", eid, {"start": start, "end": end})
                          for eid, start, end in p["_moves"]]
        out += [Add("messages", "messages", {"phone": phone, "direction": "out", "body": ("~", f"{p['delay']} min")})
                for phone in p["_texts"]]
        return out

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        now = minute_of(observe)
        events = yield from lookup(observe, call("calendar.list_events", date=now[:10]))
        for event in find_rows(events):
            if event["start"] <= now:
                continue
            found = yield from lookup(observe, call("contacts.search", query=event["attendees"][0]))
            person = _pick(found, email=event["attendees"][0])
            if not person:
                return
            yield call("messages.send", phone=person["phone"], body=f"Sorry, I'll be {p['delay']} minutes late.")
            yield call("calendar.update_event", id=event["id"], start=shift(event["start"], p["delay"]),
                       end=shift(event["end"], p["delay"]))


# ---- contacts, email, bank ---------------------------------------------------------------------------

def _accounts(w: World, rich: int) -> list[Row]:
    names = w.draw(ACCOUNT_NAMES, 3)
    return [w.add("bank", "accounts", "ac", name=name, number=f"•••• {w.rng.randint(1000, 9999)}",
                  balance=w.money(6000, 9000) if i == rich else w.money(300, 900), currency="USD")
            for i, name in enumerate(names)]


def _iban(w: World) -> str:
    return f"GB{w.rng.randrange(10 ** 20):020d}"


class UnpaidInvoicesFromRelation(_Chain):
    name = "unpaid_invoices_from_relation"
    apps = ("contacts", "email", "bank")
    chain = 3
    lookups = ("contacts.search", "email.search", "bank.list_payments", "bank.list_payees", "bank.list_accounts")
    goal_template = ("Pay every invoice my {relation} emailed me that I haven't paid yet, from my {account} account "
                     "with the invoice number as the memo; reply to each of those emails with its invoice number "
                     "and star it.")

    def build(self, w: World) -> dict[str, Any]:
        _clear(w)
        relation = w.pick(("landlord", "accountant", "plumber", "babysitter", "coach"))
        target, namesake = _person(w, relation=relation)
        accounts = _accounts(w, 1)
        payee = w.payee(target["name"], _iban(w))
        w.payee(namesake["name"], _iban(w))
        refs = w.rng.sample(range(1000, 9999), 9)
        n, paid = w.rng.randint(4, 5), w.rng.randint(1, 2)
        unpaid = []
        for k, ref in enumerate(refs[:n + paid]):
            amount = w.money(40, 900)
            mail = w.email(target["email"], f"Invoice INV-{ref}", f"INV-{ref}: ${amount:.2f} due.",
                           f"{w.day(-k - 1)}T{w.rng.randint(7, 20):02d}:{w.rng.randrange(60):02d}")
            if k < n:
                unpaid.append([f"INV-{ref}", amount, mail["id"]])
            else:
                w.add("bank", "payments", "pm", from_account=accounts[0]["id"], to=payee["id"], amount=amount,
                      memo=f"INV-{ref}", date=w.day(-k))
        w.email(namesake["email"], f"Invoice INV-{refs[-1]}", f"INV-{refs[-1]}: ${w.money(40, 900):.2f} due.",
                f"{w.day(-1)}T09:{w.rng.randrange(60):02d}")
        return {"relation": relation, "account": accounts[1]["name"], "_from": accounts[1]["id"],
                "_payee": payee["id"], "_to": target["email"], "_unpaid": unpaid,
                "_refs": [f"INV-{r}" for r in refs]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        out: list[Any] = [balance_of(p["_from"]), EMAIL_READ]
        for ref, amount, mail in p["_unpaid"]:
            out += [Add("bank", "payments", {"from_account": p["_from"], "to": p["_payee"], "amount": amount,
                                             "memo": ref}),
                    Add("email", "emails", {"folder": "sent", "to": [p["_to"]], "body": mentions(ref, *p["_refs"])}),
                    Update("email", "emails", mail, {"starred": True}, free=("read",))]
        return out

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        person = yield from person_by_relation(observe, p["relation"])
        if not person:
            return
        mails = yield from lookup(observe, call("email.search", query=person["email"], folder="inbox"))
        payments = yield from lookup(observe, call("bank.list_payments"))
        payees = yield from lookup(observe, call("bank.list_payees", query=person["name"]))
        accounts = yield from lookup(observe, call("bank.list_accounts"))
        payee, account = _pick(payees, name=person["name"]), _pick(accounts, name=p["account"])
        if payments is None or not payee or not account:
            return
        done = {r.get("memo") for r in find_rows(payments, to=payee["id"])}
        for mail in find_rows(mails, sender=person["email"]):
            found = re.search(r"(INV-\d+): \$(\d+\.\d\d)", mail["body"])
            if not found or found.group(1) in done:
                continue
            ref, amount = found.group(1), float(found.group(2))
            yield call("bank.pay", payee_id=payee["id"], from_account=account["id"], amount=amount, memo=ref)
            yield call("email.reply", id=mail["id"], body=f"Paid {ref}, thank you.")
            yield call("email.star", id=mail["id"], starred=True)


# ---- travel, weather, reminders, messages -------------------------------------------------------------

def _flights(w: World, n: int, cities: list[str]) -> list[tuple[Row, str]]:
    """n upcoming confirmed flight bookings on distinct days 2..20 ahead (cycling through `cities`),
    plus a past one and a cancelled upcoming one; returns [(flight, date)] of the n."""
    days = sorted(w.rng.sample(range(2, 21), n + 1))
    arrivals = w.rng.sample([f"{h:02d}:{m:02d}" for h in range(8, 22) for m in (5, 20, 35, 50)], n)
    out = []
    for k, day in enumerate(days[:n]):
        dest = cities[k % len(cities)]
        arrive = arrivals[k]
        flight = w.flight("Home Town", dest, w.day(day), "06:30", arrive, w.money(80, 300), "Nordair")
        w.flight_booking(flight)
        out.append([flight, w.day(day)])
    past = w.flight("Home Town", cities[0], w.day(-w.rng.randint(3, 9)), "07:00", "10:00", 120.0, "Nordair")
    w.flight_booking(past)
    gone = w.flight("Home Town", cities[-1], w.day(days[-1]), "07:00", "10:00", 140.0, "Nordair")
    w.flight_booking(gone)["status"] = "cancelled"
    return out


def _upcoming_flights(observe: Any) -> Any:
    """The flights of the confirmed flight bookings from today on (None when a lookup fails)."""
    bookings = yield from bookings_ahead(observe, "flight")
    if bookings is None:
        return None
    flights = []
    for booking in bookings:
        flight = yield from lookup(observe, call("travel.get_flight", id=booking["ref_id"]))
        if not flight:
            return None
        flights.append(flight)
    return flights


class FlightPackingReminders(_Chain):
    name = "flight_packing_reminders"
    apps = ("travel", "weather", "reminders", "contacts", "messages")
    chain = 3
    lookups = ("travel.list_bookings", "travel.get_flight", "weather.forecast", "contacts.search")
    goal_template = ("For each of my upcoming flights, remind me at {time} the day before it to pack an umbrella if "
                     "rain is likely where it lands that day, or sunglasses if not; and text my {relation} the "
                     "city and landing time of each flight.")

    def build(self, w: World) -> dict[str, Any]:
        _clear(w)
        relation = w.pick(_FAMILY)
        target, _ = _person(w, relation=relation)
        n = w.rng.randint(5, 6)
        cities = w.draw(CITIES, min(n, 4))
        flights = _flights(w, n, cities)
        rainy = {c: set() for c in cities}
        reminders, texts = [], []
        for flight, date in flights:
            wet = w.rng.random() < 0.5
            if wet:
                rainy[flight["destination"]].add(date)
            day_before = (datetime.strptime(date, "%Y-%m-%d") - timedelta(days=1)).strftime("%Y-%m-%d")
            reminders.append(["umbrella" if wet else "sunglasses", f"{day_before}T"])
            texts.append(flight["arrive"])
        for city in cities:
            _forecast(w, city, rainy[city])
        time = w.draw(TIMES3)
        return {"time": time, "relation": relation, "_phone": target["phone"],
                "_reminders": [[word, f"{due}{time}"] for word, due in reminders], "_arrivals": texts}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        out: list[Any] = []
        for word, due in p["_reminders"]:
            other = "sunglasses" if word == "umbrella" else "umbrella"
            out.append(Add("reminders", "reminders", {"due": due, "title": mentions(word, other)}))
        out += [Add("messages", "messages", {"phone": p["_phone"], "direction": "out",
                                             "body": mentions(arrive, *p["_arrivals"])})
                for arrive in p["_arrivals"]]
        return out

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        flights = yield from _upcoming_flights(observe)
        person = yield from person_by_relation(observe, p["relation"])
        if not flights or not person:
            return
        for flight in flights:
            days = yield from lookup(observe, call("weather.forecast", city=flight["destination"], date=flight["date"]))
            if not days:
                return
            word = "an umbrella" if days[0]["rain_pct"] >= 50 else "sunglasses"
            before = (datetime.strptime(flight["date"], "%Y-%m-%d") - timedelta(days=1)).strftime("%Y-%m-%d")
            yield call("reminders.create", title=f"Pack {word} for {flight['destination']}", due=f"{before}T{p['time']}")
            yield call("messages.send", phone=person["phone"],
                       body=f"I land in {flight['destination']} on {flight['date']} at {flight['arrive']}.")


class HotelsForUpcomingFlights(_Chain):
    name = "hotels_for_upcoming_flights"
    apps = ("travel",)
    chain = 3
    lookups = ("travel.list_bookings", "travel.get_flight", "travel.search_hotels")
    goal_template = ("For each of my upcoming flights, book the best-rated hotel under ${cap} a night in the city it "
                     "flies to, checking in the day it lands, for {nights} nights.")

    def build(self, w: World) -> dict[str, Any]:
        _clear(w)
        n = w.rng.randint(6, 7)
        cap, nights = w.pick([120, 150, 180]), w.pick([2, 3, 4])
        cities = w.draw(CITIES, min(n, 4))
        best = {}
        for city in cities:
            names = w.draw(HOTELS, 3)
            ratings = sorted(w.rng.sample([3.6, 3.8, 4.0, 4.2, 4.4, 4.6, 4.8], 3), reverse=True)
            w.hotel(names[0], city, cap + w.money(10, 60), ratings[0])  # best, but over the cap
            best[city] = w.hotel(names[1], city, cap - w.money(5, 30), ratings[1])["id"]
            w.hotel(names[2], city, cap - w.money(40, 70), ratings[2])  # cheapest, rated lower
        flights = _flights(w, n, cities)
        return {"cap": cap, "nights": nights,
                "_stays": [[best[f["destination"]], date] for f, date in flights]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("travel", "bookings", {"kind": "hotel", "ref_id": hotel, "check_in": date, "nights": p["nights"],
                                           "status": "confirmed"}) for hotel, date in p["_stays"]]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        flights = yield from _upcoming_flights(observe)
        for flight in flights or ():
            top = yield from best_hotel_under(observe, flight["destination"], p["cap"])
            if not top:
                return
            yield call("travel.book_hotel", hotel_id=top["id"], check_in=flight["date"], nights=p["nights"])


# ---- notes, shopping, contacts, recipes, calendar ------------------------------------------------------

def _offers(w: World, item: str) -> Row:
    """Three offers of `item`: a cheaper one out of stock, the cheapest in stock, a dearer one."""
    return w.grocery_offers(item, "value", "premium", 25)


class ListNoteToRelation(_Chain):
    name = "list_note_to_relation"
    apps = ("notes", "shopping", "contacts")
    lookups = ("notes.search", "shopping.search", "contacts.search")
    goal_template = ("Order everything on my '{topic}' list note, the cheapest in-stock offer of each item, and have "
                     "it shipped to my {relation}'s address.")

    def build(self, w: World) -> dict[str, Any]:
        _clear(w)
        topic = w.draw(TOPICS3)
        relation = w.pick(_FAMILY)
        n = w.rng.randint(8, 9)
        items = w.draw(GROCERIES, n + 2)
        used: set[str] = set()
        target, namesake = _person(w, relation=relation, address=_address(w, used))
        namesake["address"] = _address(w, used)
        picks = [_offers(w, item)["id"] for item in items[:n]]
        for item in items[n:]:
            _offers(w, item)
        w.note(topic, "\n".join(f"- {item}" for item in items[:n]), folder="Lists")
        w.note(f"{topic} (last month)", "\n".join(f"- {item}" for item in items[2:]), folder="Lists",
               pinned=True)  # listed first
        return {"topic": topic, "relation": relation, "_address": target["address"],
                "_items": [{"product_id": pid, "quantity": 1} for pid in picks]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("shopping", "orders", {"items": p["_items"], "address": p["_address"], "status": "placed"}),
                STOCK, CART]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        notes = yield from lookup(observe, call("notes.search", query=p["topic"]))
        note = _pick(notes, title=p["topic"])
        if not note:
            return
        yield from cart_cheapest(observe, re.findall(r"^- (.+)$", note["body"], flags=re.MULTILINE), 1)
        person = yield from person_by_relation(observe, p["relation"])
        if person:
            yield call("shopping.checkout", address=person["address"])


class CookPlanToCart(_Chain):
    name = "cook_plan_to_cart"
    apps = ("calendar", "recipes", "shopping")
    chain = 3
    lookups = ("calendar.search", "recipes.search", "shopping.search")
    goal_template = ("For every 'Cook:' dinner in my calendar over the next seven days, put one of each ingredient of "
                     "that recipe in the cart, the cheapest in-stock offer of each.")

    def build(self, w: World) -> dict[str, Any]:
        _clear(w)
        n = 4
        dishes = w.draw(MEALS, 4)
        items = w.draw(GROCERIES, 3 * n + 1)
        picks = []
        days = sorted(w.rng.sample(range(1, 8), n))
        for k, (dish, day) in enumerate(zip(dishes, days, strict=False)):
            mine = items[3 * k:3 * k + w.rng.randint(2, 3)]
            w.recipe(dish, "home", 40, mine)
            w.recipe(f"{dish} for one", "home", 25, [items[-1]])
            picks += [_offers(w, item)["id"] for item in mine]
            w.event(f"Cook: {dish}", _at(w.day(day), 1140), _at(w.day(day), 1200))
        for item in items[3 * n:]:
            _offers(w, item)
        w.event(f"Cook: {dishes[-1]}", _at(w.day(12), 1140), _at(w.day(12), 1200))  # not this week
        w.event(f"Cook: {dishes[0]}", _at(w.day(-3), 1140), _at(w.day(-3), 1200))  # already cooked
        return {"_ids": picks}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("shopping", "cart", {"product_id": pid, "quantity": 1}) for pid in p["_ids"]]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        for dish in (yield from events_ahead(observe, "Cook:", 7)):
            recipes = yield from lookup(observe, call("recipes.search", query=dish))
            recipe = _pick(recipes, title=dish)
            if not recipe:
                return
            yield from cart_cheapest(observe, recipe["ingredients"], 1)


# ---- messages, bank ----------------------------------------------------------------------------------

class PayBackLenders(_Chain):
    name = "pay_back_lenders"
    apps = ("messages", "bank")
    lookups = ("messages.search", "bank.list_payees", "bank.list_accounts")
    goal_template = ("Everyone who texted me in the last week that I owe them money: pay each of them back from my "
                     "{account} account, and text each one the amount I sent.")

    def build(self, w: World) -> dict[str, Any]:
        _clear(w)
        accounts = _accounts(w, 2)
        n = w.rng.randint(6, 7)
        debts, amounts = [], []
        for k in range(n + 2):
            person, namesake = _person(w)
            payee = w.payee(person["name"], _iban(w))
            w.payee(namesake["name"], _iban(w))
            amount = w.money(8, 120)
            amounts.append(f"{amount:.2f}")
            if k < n:
                w.text(person, f"You owe me ${amount:.2f} for the tickets", f"{w.day(-w.rng.randint(0, 6))}T18:00")
                debts.append([payee["id"], person["phone"], amount])
            elif k == n:  # too old
                w.text(person, f"You owe me ${amount:.2f} for lunch", f"{w.day(-w.rng.randint(12, 20))}T12:00")
            else:  # the other way round
                w.text(person, f"I owe you ${amount:.2f}, will pay soon", f"{w.day(-1)}T20:00")
        return {"account": accounts[2]["name"], "_from": accounts[2]["id"], "_debts": debts, "_amounts": amounts}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        out: list[Any] = [balance_of(p["_from"]), TEXT_READ]
        for payee, phone, amount in p["_debts"]:
            out += [Add("bank", "payments", {"from_account": p["_from"], "to": payee, "amount": amount}),
                    Add("messages", "messages", {"phone": phone, "direction": "out",
                                                 "body": mentions(f"{amount:.2f}", *p["_amounts"])})]
        return out

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        since = day_of(observe, -7)
        texts = yield from lookup(observe, call("messages.search", query="you owe me"))
        accounts = yield from lookup(observe, call("bank.list_accounts"))
        account = _pick(accounts, name=p["account"])
        if texts is None or not account:
            return
        for text in find_rows(texts, direction="in"):
            found = re.search(r"You owe me \$(\d+\.\d\d)", text["body"])
            if not found or text["sent_at"][:10] < since:
                continue
            payees = yield from lookup(observe, call("bank.list_payees", query=text["contact"]))
            payee = _pick(payees, name=text["contact"])
            if not payee:
                return
            yield call("bank.pay", payee_id=payee["id"], from_account=account["id"], amount=float(found.group(1)))
            yield call("messages.send", phone=text["phone"], body=f"Sent you ${found.group(1)}, thanks!")


# ---- calendar, maps, weather ------------------------------------------------------------------------

class EventForecastNotes(_Chain):
    name = "event_forecast_notes"
    apps = ("calendar", "maps", "weather")
    chain = 3
    lookups = ("calendar.list_events", "maps.search_places", "weather.forecast")
    goal_template = ("For each of my events on {weekday}, write that day's forecast high for the city its place is in "
                     "into the event's notes.")

    def build(self, w: World) -> dict[str, Any]:
        _clear(w)
        date = w.some_weekday()
        n = w.rng.randint(7, 8)
        cities = w.draw(CITIES, 4)
        highs = dict(zip(cities, w.rng.sample(range(13, 31), len(cities)), strict=True))
        titles, venues = w.draw(MEETINGS, n), w.draw(VENUES, n)
        used: set[str] = set()
        notes = []
        for title, venue, start in zip(titles, venues, _hours(w, n), strict=True):
            city = w.pick(cities)
            _venue(w, venue, used, city)
            ev = w.event(title, _at(date, start), _at(date, start + 60), venue)
            notes.append([ev["id"], highs[city]])
        for city in cities:
            _forecast(w, city, highs={date: highs[city]})
        return {"weekday": weekday_name(date), "_notes": notes, "_highs": sorted(highs.values())}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("calendar", "events", eid, {"notes": mentions(str(high), *map(str, p["_highs"]))})
                for eid, high in p["_notes"]]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        date, events = yield from events_on(observe, p["weekday"])
        for event in events:
            place = yield from _venue_of(observe, event)
            if not place:
                return
            city = place["address"].rsplit(", ", 1)[-1]
            days = yield from lookup(observe, call("weather.forecast", city=city, date=date))
            if not days:
                return
            yield call("calendar.update_event", id=event["id"], notes=f"Forecast in {city}: high {days[0]['high']}°C")


# ---- contacts, weather, messages --------------------------------------------------------------------

class FamilyForecastTexts(_Chain):
    name = "family_forecast_texts"
    apps = ("contacts", "weather", "messages")
    test_only = True
    lookups = ("contacts.search", "weather.forecast")
    goal_template = "Text my {who} tomorrow's forecast high for the city each of them lives in."

    def build(self, w: World) -> dict[str, Any]:
        _clear(w)
        n = w.rng.randint(6, 7)
        relations = w.pick(_FAMILY, n)
        cities = w.draw(CITIES, 5)
        tomorrow = w.day(1)
        highs = dict(zip(cities, w.rng.sample(range(13, 31), 5), strict=True))
        texts = []
        for relation in relations:
            city, other = w.pick(cities, 2)
            target, namesake = _person(w, relation=relation, city=city)
            namesake["city"] = other
            texts.append([target["phone"], highs[city]])
        for city in cities:
            _forecast(w, city, highs={tomorrow: highs[city]})
        who = ", ".join(relations[:-1]) + f" and {relations[-1]}"
        return {"who": who, "_texts": texts, "_highs": sorted(highs.values())}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("messages", "messages", {"phone": phone, "direction": "out",
                                             "body": mentions(str(high), *map(str, p["_highs"]))})
                for phone, high in p["_texts"]]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        tomorrow = day_of(observe, 1)
        for relation in re.split(r", | and ", p["who"]):
            person = yield from person_by_relation(observe, relation)
            if not person:
                return
            days = yield from lookup(observe, call("weather.forecast", city=person["city"], date=tomorrow))
            if not days:
                return
            yield call("messages.send", phone=person["phone"],
                       body=f"Tomorrow in {person['city']}: high of {days[0]['high']}°C.")


# ---- calendar, travel -----------------------------------------------------------------------------

class ConferenceTravel(_Chain):
    name = "conference_travel"
    apps = ("calendar", "travel")
    lookups = ("calendar.search", "travel.search_flights", "travel.search_hotels")
    goal_template = ("For each upcoming conference in my calendar, book the cheapest flight from {origin} to its city "
                     "on the day before it starts, and the best-rated hotel there under ${cap} a night from that "
                     "day until the day it ends.")

    def build(self, w: World) -> dict[str, Any]:
        _clear(w)
        n = 5
        origin, *cities = w.draw(CITIES, 5)
        cap = w.pick([110, 140, 170])
        starts = sorted(w.rng.sample(range(3, 28), n))
        flights, stays, best = [], [], {}
        for k, start in enumerate(starts):
            city = cities[k % 4]
            length = w.rng.randint(1, 3)
            w.event(f"Conference: {city}", _at(w.day(start), 540), _at(w.day(start + length - 1), 1020),
                    location=city)
            prices = w.distinct_money(60, 300, 3)
            fl = [w.flight(origin, city, w.day(start - 1), f"{7 + j * 3:02d}:00", f"{9 + j * 3:02d}:00", price,
                           "Nordair") for j, price in enumerate(w.rng.sample(prices, 3))]
            w.flight(origin, city, w.day(start - 2), "06:00", "08:00", round(prices[0] - 15, 2), "Nordair")
            flights.append(min(fl, key=lambda f: f["price"])["id"])
            if city not in best:
                names = w.draw(HOTELS, 3)
                ratings = sorted(w.rng.sample([3.5, 3.8, 4.1, 4.4, 4.7], 3), reverse=True)
                w.hotel(names[0], city, cap + w.money(10, 50), ratings[0])
                best[city] = w.hotel(names[1], city, cap - w.money(5, 25), ratings[1])["id"]
                w.hotel(names[2], city, cap - w.money(35, 60), ratings[2])
            stays.append([best[city], w.day(start - 1), length])
        w.event(f"Conference: {cities[0]}", _at(w.day(-6), 540), _at(w.day(-5), 1020), location=cities[0])
        return {"origin": origin, "cap": cap, "_flights": flights, "_stays": stays}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        out: list[Any] = [Add("travel", "bookings", {"kind": "flight", "ref_id": f, "status": "confirmed"})
                          for f in p["_flights"]]
        out += [Add("travel", "bookings", {"kind": "hotel", "ref_id": h, "check_in": d, "nights": nights})
                for h, d, nights in p["_stays"]]
        return out

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        today = day_of(observe)
        events = yield from lookup(observe, call("calendar.search", query="Conference:"))
        for event in find_rows(events):
            if event["start"][:10] <= today:
                continue
            city = event["location"]
            first = datetime.strptime(event["start"][:10], "%Y-%m-%d")
            last = datetime.strptime(event["end"][:10], "%Y-%m-%d")
            day_before = (first - timedelta(days=1)).strftime("%Y-%m-%d")
            flights = yield from lookup(observe, call("travel.search_flights", origin=p["origin"], destination=city,
                                                      date=day_before))
            top = yield from best_hotel_under(observe, city, p["cap"])
            if not find_rows(flights) or not top:
                return
            yield call("travel.book_flight", flight_id=cheapest(flights)["id"])
            yield call("travel.book_hotel", hotel_id=top["id"], check_in=day_before, nights=(last - first).days + 1)


# ---- email, calendar ----------------------------------------------------------------------------------

class DeclineEmailsUpdateEvents(_Chain):
    name = "decline_emails_update_events"
    apps = ("email", "calendar")
    test_only = True
    lookups = ("email.search", "calendar.search")
    goal_template = ("Some guests emailed that they can't make one of my events. Take each of them off that event's "
                     "guest list and reply \"{phrase}\" to each.")

    def build(self, w: World) -> dict[str, Any]:
        _clear(w)
        n = 7
        titles = w.draw(MEETINGS, n + 1)
        updates, replies = [], []
        for k, title in enumerate(titles):
            guests = [_person(w)[0] for _ in range(3)]
            day = w.rng.randint(2, 20)
            ev = w.event(title, _at(w.day(day), 600), _at(w.day(day), 660), w.draw(VENUES),
                         [g["email"] for g in guests])
            if k < n:
                who = w.pick(guests)
                w.email(who["email"], f"Can't make it: {title}", f"Sorry, I can't make it to {title}.",
                        f"{w.day(-w.rng.randint(0, 3))}T{w.rng.randint(8, 20):02d}:00")
                updates.append([ev["id"], [g["email"] for g in guests if g is not who]])
                replies.append(who["email"])
            else:  # a guest who confirms
                w.email(guests[0]["email"], f"See you at {title}", f"Looking forward to {title}.", f"{w.day(-1)}T09:00")
        phrase = w.pick(("No problem, thanks for letting me know.", "Noted, we'll miss you.",
                         "Thanks for the heads-up."))
        return {"phrase": phrase, "_updates": updates, "_replies": replies}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        out: list[Any] = [Update("calendar", "events", eid, {"attendees": guests}) for eid, guests in p["_updates"]]
        out += [Add("email", "emails", {"folder": "sent", "to": [who], "body": p["phrase"]}) for who in p["_replies"]]
        return [*out, EMAIL_READ]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        mails = yield from lookup(observe, call("email.search", query="can't make it", folder="inbox"))
        for mail in find_rows(mails):
            found = re.match(r"Can't make it: (.+)$", mail["subject"])
            if not found:
                continue
            events = yield from lookup(observe, call("calendar.search", query=found.group(1)))
            event = _pick(events, title=found.group(1))
            if not event:
                return
            yield call("calendar.update_event", id=event["id"],
                       attendees=[a for a in event["attendees"] if a != mail["sender"]])
            yield call("email.reply", id=mail["id"], body=p["phrase"])


# ---- messages, contacts, calendar ------------------------------------------------------------------

class MeetingRequestsFromTexts(_Chain):
    name = "meeting_requests_from_texts"
    apps = ("messages", "contacts", "calendar")
    lookups = ("messages.list", "contacts.search")
    goal_template = ("Several people texted me asking to meet. For each unread request, put an hour-long event "
                     "called 'Meet' plus their name in my calendar at the time they asked for, with their email as "
                     "the guest, and text them \"{phrase}\".")

    def build(self, w: World) -> dict[str, Any]:
        _clear(w)
        n = w.rng.randint(6, 7)
        hours = w.rng.sample(range(9, 18), n)
        events, texts = [], []
        for k in range(n):
            person, _ = _person(w)
            day = w.rng.randint(1, 6)
            weekday = weekday_name(w.day(day))
            w.text(person, f"Can we meet on {weekday} at {hours[k]:02d}:00?", f"{w.day(0)}T0{7 - k % 3}:{k:02d}")
            start = _at(w.day(day), hours[k] * 60)
            events.append([person["name"], start, shift(start, 60), person["email"]])
            texts.append(person["phone"])
        old, _ = _person(w)
        w.text(old, "Can we meet on Monday at 10:00?", f"{w.day(-9)}T10:00", read=True)
        phrase = w.pick(("It's in my calendar, see you then.", "Booked, see you then!", "Done, talk soon."))
        return {"phrase": phrase, "_events": events, "_texts": texts}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        out: list[Any] = [Add("calendar", "events", {"title": mentions(name), "start": start, "end": end,
                                                     "attendees": [email]})
                          for name, start, end, email in p["_events"]]
        out += [Add("messages", "messages", {"phone": phone, "direction": "out", "body": p["phrase"]})
                for phone in p["_texts"]]
        return out

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        texts = yield from lookup(observe, call("messages.list", unread=True))
        for text in find_rows(texts, direction="in"):
            found = re.match(r"Can we meet on (\w+) at (\d\d:\d\d)\?", text["body"])
            if not found:
                continue
            people = yield from lookup(observe, call("contacts.search", query=text["contact"]))
            person = _pick(people, name=text["contact"])
            if not person:
                return
            start = f"{weekday_date(observe, found.group(1))}T{found.group(2)}"
            yield call("calendar.create_event", title=f"Meet {person['name']}", start=start, end=shift(start, 60),
                       attendees=[person["email"]])
            yield call("messages.send", phone=person["phone"], body=p["phrase"])


# ---- notes, contacts, maps, messages, calendar ----------------------------------------------------------

class PartyGuestsFromNote(_Chain):
    name = "party_guests_from_note"
    apps = ("notes", "contacts", "maps", "messages", "calendar")
    lookups = ("notes.search", "contacts.search", "maps.search_places", "calendar.search")
    goal_template = ("Text everyone on my '{topic}' guest list note the street address of the place my '{title}' "
                     "event is at, and add each guest's email to that event.")

    def build(self, w: World) -> dict[str, Any]:
        _clear(w)
        topic, title = w.draw(TOPICS3), w.draw(MEETINGS)
        n = w.rng.randint(8, 9)
        used: set[str] = set()
        venue = w.draw(VENUES)
        place = _venue(w, venue, used)
        guests = [_person(w)[0] for _ in range(n + 2)]
        w.note(topic, "\n".join(g["name"] for g in guests[:n]), folder="Lists")
        w.note(f"{topic} (draft)", "\n".join(g["name"] for g in guests[2:]), folder="Lists")
        day = w.rng.randint(3, 12)
        ev = w.event(title, _at(w.day(day), 1140), _at(w.day(day), 1320), venue)
        w.event(f"{title} planning", _at(w.day(1), 720), _at(w.day(1), 750), "Home")
        return {"topic": topic, "title": title, "_event": ev["id"], "_emails": [g["email"] for g in guests[:n]],
                "_phones": [g["phone"] for g in guests[:n]], "_address": place["address"], "_addresses": sorted(used)}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        out: list[Any] = [Update("calendar", "events", p["_event"], {"attendees": p["_emails"]})]
        out += [Add("messages", "messages", {"phone": phone, "direction": "out",
                                             "body": mentions(p["_address"], *p["_addresses"])})
                for phone in p["_phones"]]
        return out

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        notes = yield from lookup(observe, call("notes.search", query=p["topic"]))
        note = _pick(notes, title=p["topic"])
        events = yield from lookup(observe, call("calendar.search", query=p["title"]))
        event = _pick(events, title=p["title"])
        if not note or not event:
            return
        place = yield from _venue_of(observe, event)
        if not place:
            return
        emails = []
        for name in note["body"].splitlines():
            people = yield from lookup(observe, call("contacts.search", query=name))
            person = _pick(people, name=name)
            if not person:
                return
            emails.append(person["email"])
            yield call("messages.send", phone=person["phone"], body=f"The party is at {place['address']}.")
        yield call("calendar.update_event", id=event["id"], attendees=emails)


TEMPLATES = [MeetingAddressesToAttendees, LateForTodaysMeetings, UnpaidInvoicesFromRelation, FlightPackingReminders,
             HotelsForUpcomingFlights, ListNoteToRelation, CookPlanToCart, PayBackLenders, EventForecastNotes,
             FamilyForecastTexts, ConferenceTravel, DeclineEmailsUpdateEvents, MeetingRequestsFromTexts,
             PartyGuestsFromNote]
