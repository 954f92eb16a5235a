"""More genuine looping chains (see devices.suite.templates.tool_chains): a first lookup lists rows,
and each row needs two or more dependent lookups before the write it asks for.

- `meeting_venues_by_email`: a day's meetings → each venue's address (not its "Annex") → an email
  to the attendee with it, and the venue saved to a maps list.
- `flight_events_with_forecast`: upcoming flight bookings → each flight → the forecast where it
  lands → a calendar event for the flight with the forecast high in its notes.
- `hotel_stays_forecast_to_relation`: upcoming hotel bookings → each hotel (its city) → the
  forecast there on check-in → a text per stay to a relation.
- `birthday_gifts_shipped`: this month's birthdays in the calendar → each person's contact (their
  address, not a namesake's) → the cheapest in-stock gift → one order per person.
- `song_requests_playlist`: who my relation is → their texted song list (not a namesake's) →
  each song by the named artist (not a same-titled cover) → one playlist.
"""

from __future__ import annotations

import re
from typing import Any

from devices.suite.diff import Add, mentions
from devices.suite.templates._hkit import pool3
from devices.suite.templates._vocab import CITIES, PRODUCTS3
from devices.suite.templates._world import (
    CART,
    STOCK,
    TEXT_READ,
    World,
    bookings_ahead,
    call,
    cheapest,
    events_ahead,
    events_on,
    find_rows,
    lookup,
    person_by_relation,
    weekday_name,
)
from devices.suite.templates.tool_chains import (
    _FAMILY,
    MEETINGS,
    VENUES,
    _address,
    _at,
    _Chain,
    _clear,
    _flights,
    _forecast,
    _hours,
    _person,
    _pick,
    _upcoming_flights,
    _venue,
    _venue_of,
)

__all__ = ["TEMPLATES"]

LISTS = pool3("Client spots|Offsite venues|Workshop rooms|Pitch places",
              "Partner venues|Demo rooms|Sponsor spots",
              "Board venues|Donor spots|Press rooms")
TUNES = pool3("Harbour Bells|Copper Sky|Paper Lanterns|Slow River|Night Orchard|Glass Tide|Winter Kite"
              "|Amber Road|Low Tide Waltz",
              "Falling Maples|Silver Ferry|Blue Orchard|Salt Wind|North Lights|Velvet Hills|Stone Garden"
              "|Quiet Harbour",
              "Midnight Ferris|Lemon Rain|Hollow Moon|Ivory Coast Line|Red Kite Song|Cinder Bay|Drift Season"
              "|Open Fields")
BANDS = pool3("The Marrows|Oak & Ash|Brightline|Cold Cellar", "The Lanterns|Fathom|Greyhound Sun",
              "The Wayfarers|Kettle Drum|Night Signal")


class MeetingVenuesByEmail(_Chain):
    name = "meeting_venues_by_email"
    apps = ("calendar", "maps", "email")
    lookups = ("calendar.list_events", "maps.search_places")
    goal_template = ("For each of my meetings on {weekday}, email its attendee the street address of its place, and "
                     "save that place to my '{listname}' list in maps.")

    def build(self, w: World) -> dict[str, Any]:
        _clear(w)
        date = w.some_weekday()
        n = w.rng.randint(7, 8)
        titles, venues = w.draw(MEETINGS, n), w.draw(VENUES, n)
        used: set[str] = set()
        mails, saves = [], []
        for title, venue, start in zip(titles, venues, _hours(w, n, 8, 19), strict=True):
            person, _ = _person(w)
            place = _venue(w, venue, used)
            w.event(title, _at(date, start), _at(date, start + 45), venue, [person["email"]])
            mails.append([person["email"], place["address"]])
            saves.append(place["id"])
        later, _ = _person(w)
        w.event(titles[0], _at(w.day(9), 600), _at(w.day(9), 660), venues[0], [later["email"]])
        return {"weekday": weekday_name(date), "listname": w.draw(LISTS), "_mails": mails, "_saves": saves,
                "_addresses": sorted(used)}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        out: list[Any] = [Add("email", "emails", {"folder": "sent", "to": [to],
                                                  "body": mentions(address, *p["_addresses"])})
                          for to, address in p["_mails"]]
        out += [Add("maps", "saved", {"place_id": pid, "list": p["listname"]}) for pid in p["_saves"]]
        return out

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        _, events = yield from events_on(observe, p["weekday"])
        for event in events:
            place = yield from _venue_of(observe, event)
            if not place:
                return
            yield call("email.send", to=event["attendees"], subject=f"Where: {event['title']}",
                       body=f"{event['title']} is at {place['name']}, {place['address']}.")
            yield call("maps.save_place", place_id=place["id"], list=p["listname"])


class FlightEventsWithForecast(_Chain):
    name = "flight_events_with_forecast"
    apps = ("travel", "weather", "calendar")
    chain = 3
    lookups = ("travel.list_bookings", "travel.get_flight", "weather.forecast")
    goal_template = ("Put each of my upcoming flights in my calendar as an event from departure to landing, titled "
                     "with its destination, with the forecast high there on that day in the event's notes.")

    def build(self, w: World) -> dict[str, Any]:
        _clear(w)
        n = w.rng.randint(6, 7)
        cities = w.draw(CITIES, 4)
        flights = _flights(w, n, cities)
        highs: dict[str, dict[str, int]] = {c: {} for c in cities}
        events, all_highs = [], set()
        for flight, date in flights:
            taken = set(highs[flight["destination"]].values()) | all_highs
            high = w.pick([h for h in range(13, 31) if h not in taken])
            all_highs.add(high)
            highs[flight["destination"]][date] = high
            events.append([flight["destination"], f"{date}T{flight['depart']}", f"{date}T{flight['arrive']}", high])
        for city in cities:
            _forecast(w, city, highs=highs[city])
        return {"_events": events, "_highs": sorted(all_highs)}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("calendar", "events", {"title": mentions(city), "start": start, "end": end,
                                           "notes": mentions(str(high), *map(str, p["_highs"]))})
                for city, start, end, high in p["_events"]]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        flights = yield from _upcoming_flights(observe)
        for flight in flights or ():
            days = yield from lookup(observe, call("weather.forecast", city=flight["destination"], date=flight["date"]))
            if not days:
                return
            yield call("calendar.create_event", title=f"Flight to {flight['destination']}",
                       start=f"{flight['date']}T{flight['depart']}", end=f"{flight['date']}T{flight['arrive']}",
                       notes=f"High of {days[0]['high']}°C on arrival.")


class HotelStaysForecastToRelation(_Chain):
    name = "hotel_stays_forecast_to_relation"
    apps = ("travel", "weather", "contacts", "messages")
    chain = 3
    test_only = True
    lookups = ("travel.list_bookings", "travel.get_hotel", "weather.forecast", "contacts.search")
    goal_template = ("For each hotel stay I have booked from today on, text my {relation} the hotel's name, its city "
                     "and the forecast high there on the day I check in.")

    def build(self, w: World) -> dict[str, Any]:
        _clear(w)
        relation = w.pick(_FAMILY)
        target, _ = _person(w, relation=relation)
        n = w.rng.randint(6, 7)
        cities = w.draw(CITIES, 4)
        days = sorted(w.rng.sample(range(1, 25), n + 1))
        highs: dict[str, dict[str, int]] = {c: {} for c in cities}
        texts, all_highs = [], set()
        for k, day in enumerate(days[:n]):
            city = cities[k % len(cities)]
            hotel = w.hotel(f"{city} Lodge {k + 1}", city, w.money(80, 200), 4.0)
            w.hotel_booking(hotel["id"], 2, w.day(day), 300.0)
            high = w.pick([h for h in range(13, 31) if h not in all_highs])
            all_highs.add(high)
            highs[city][w.day(day)] = high
            texts.append(high)
        old = w.hotel(f"{cities[0]} Lodge 0", cities[0], 90.0, 3.9)
        w.hotel_booking(old["id"], 2, w.day(-w.rng.randint(3, 9)), 180.0)
        gone = w.hotel(f"{cities[-1]} Lodge 9", cities[-1], 95.0, 4.1)
        w.hotel_booking(gone["id"], 2, w.day(days[-1]), 190.0, status="cancelled")
        for city in cities:
            _forecast(w, city, highs=highs[city])
        return {"relation": relation, "_phone": target["phone"], "_highs": texts}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("messages", "messages", {"phone": p["_phone"], "direction": "out",
                                             "body": mentions(str(high), *map(str, p["_highs"]))})
                for high in p["_highs"]]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        person = yield from person_by_relation(observe, p["relation"])
        bookings = yield from bookings_ahead(observe, "hotel")
        if not person or bookings is None:
            return
        for booking in bookings:
            hotel = yield from lookup(observe, call("travel.get_hotel", id=booking["ref_id"]))
            if not hotel:
                return
            days = yield from lookup(observe, call("weather.forecast", city=hotel["city"], date=booking["check_in"]))
            if not days:
                return
            yield call("messages.send", phone=person["phone"],
                       body=f"{hotel['name']} in {hotel['city']}: high of {days[0]['high']}°C when I arrive.")


class BirthdayGiftsShipped(_Chain):
    name = "birthday_gifts_shipped"
    apps = ("calendar", "contacts", "shopping")
    lookups = ("calendar.search", "contacts.search", "shopping.search")
    goal_template = ("For each birthday in my calendar in the next {days} days, order that person a {product}, the "
                     "cheapest in-stock one, shipped to their address, one order per person.")

    def build(self, w: World) -> dict[str, Any]:
        _clear(w)
        days, product = w.pick([20, 25, 30]), w.draw(PRODUCTS3)
        best = w.grocery_offers(product, "refurbished", "deluxe", 40)
        n = w.rng.randint(5, 6)
        used: set[str] = set()
        orders = []
        for k, day in enumerate(sorted(w.rng.sample(range(1, days), n)) + [days + 5]):
            person, namesake = _person(w, address=_address(w, used))
            namesake["address"] = _address(w, used)
            w.event(f"Birthday: {person['name']}", _at(w.day(day), 0), _at(w.day(day), 1439))
            if k < n:
                orders.append(person["address"])
        return {"days": days, "product": product, "_product": best["id"], "_orders": orders}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("shopping", "orders", {"items": [{"product_id": p["_product"], "quantity": 1}], "address": a,
                                           "status": "placed"}) for a in p["_orders"]] + [STOCK, CART]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        for name in (yield from events_ahead(observe, "Birthday:", p["days"])):
            people = yield from lookup(observe, call("contacts.search", query=name))
            person = _pick(people, name=name)
            offers = yield from lookup(observe, call("shopping.search", query=p["product"], in_stock=True))
            if not person or not offers:
                return
            yield call("shopping.add_to_cart", product_id=cheapest(offers)["id"], quantity=1)
            yield call("shopping.checkout", address=person["address"])


class SongRequestsPlaylist(_Chain):
    name = "song_requests_playlist"
    apps = ("contacts", "messages", "music")
    chain = 3
    lookups = ("contacts.search", "messages.list", "music.search")
    goal_template = ("My {relation} texted me the songs they want for the road trip. Make a playlist called "
                     "'{playlist}' with exactly those songs, by the artists they named.")

    def build(self, w: World) -> dict[str, Any]:
        _clear(w)
        relation = w.pick(_FAMILY)
        target, namesake = _person(w, relation=relation)
        n = w.rng.randint(7, 8)
        titles = w.draw(TUNES, n)
        bands = w.draw(BANDS, 3)
        picks, asked = [], []
        for title in titles:
            band, cover = w.pick(bands, 2)
            picks.append(w.track(title, band, "Singles", w.rng.randint(2, 6))["id"])
            w.track(title, cover, "Covers", w.rng.randint(2, 6))
            asked.append(f"{title} by {band}")
        w.text(target, "Road trip songs: " + "; ".join(asked), f"{w.day(-1)}T19:00")
        w.text(namesake, "Road trip songs: " + "; ".join(asked[:2][::-1]), f"{w.day(0)}T07:30")
        return {"relation": relation, "playlist": f"Road trip {w.draw(LISTS)}", "_tracks": picks}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("music", "playlists", {"name": p["playlist"], "track_ids": p["_tracks"]}), TEXT_READ]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        person = yield from person_by_relation(observe, p["relation"])
        if not person:
            return
        texts = yield from lookup(observe, call("messages.list", contact=person["name"]))
        songs = [m for t in find_rows(texts, direction="in") if (m := re.match(r"Road trip songs: (.+)$", t["body"]))]
        if len(songs) != 1:
            return
        created = yield from lookup(observe, call("music.create_playlist", name=p["playlist"]))
        if not created:
            return
        for song in songs[0].group(1).split("; "):
            title, band = song.rsplit(" by ", 1)
            tracks = yield from lookup(observe, call("music.search", query=title))
            track = _pick(tracks, title=title, artist=band)
            if not track:
                return
            yield call("music.add_to_playlist", playlist_id=created["id"], track_id=track["id"])


TEMPLATES = [MeetingVenuesByEmail, FlightEventsWithForecast, HotelStaysForecastToRelation, BirthdayGiftsShipped,
             SongRequestsPlaylist]

