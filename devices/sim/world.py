"""The default seeded world every SimPhone starts from: contacts, events, messages, places, products, files."""

from __future__ import annotations

import random
from typing import Any

__all__ = ["WORLD_SEED", "default_world"]

# Fixed so that every task sees the same people and places (templates may name them);
# change it only together with the task suite's expectations.
WORLD_SEED = 20260101

_PEOPLE = (
    ("Alice Chen", "Northwind"), ("Bob Martinez", "Contoso"), ("Carol Okafor", "Fabrikam"),
    ("David Kim", "Northwind"), ("Emma Novak", "Initech"), ("Farid Haddad", "Contoso"),
    ("Grace Liu", "Globex"), ("Hugo Schmidt", "Fabrikam"), ("Isabel Rossi", "Initech"),
    ("Jamal Wright", "Globex"),
)
_EVENTS = (
    ("Team standup", "2026-01-02T09:00", 30, "Room 4B"),
    ("Dentist appointment", "2026-01-02T15:00", 60, "Smile Clinic"),
    ("Project review", "2026-01-05T10:00", 90, "Room 2A"),
    ("Lunch with mentor", "2026-01-05T12:30", 60, "Green Bowl"),
    ("Yoga class", "2026-01-06T18:00", 60, "City Gym"),
    ("Budget planning", "2026-01-07T14:00", 120, "Room 4B"),
    ("Parents visit", "2026-01-08T17:00", 180, "Home"),
    ("Quarterly all-hands", "2026-01-09T16:00", 60, "Auditorium"),
)
_MESSAGE_BODIES = (
    "Are we still on for lunch?", "Running 10 minutes late.", "Can you send me the report?",
    "Happy new year!", "Thanks for yesterday.", "Call me when you are free.",
    "The package arrived.", "See you at the gym.", "Did you book the tickets?",
    "Meeting moved to 3pm.", "Great job on the demo!", "Where should we meet?",
)
_NOTES = (
    ("Groceries", "milk, eggs, spinach, coffee", "Personal", True),
    ("Gift ideas", "book for Carol, scarf for Grace", "Personal", False),
    ("Q1 goals", "ship v2, hire two engineers, cut costs", "Work", True),
    ("Wifi password", "guest network: sunflower42", "Home", False),
    ("Reading list", "Dune; The Pragmatic Programmer; Atomic Habits", "Personal", False),
    ("Meeting notes 12/30", "agreed on roadmap; follow up with Farid", "Work", False),
)
_EMAILS = (
    ("inbox", "Invoice for December", "Your invoice of $120.00 is attached."),
    ("inbox", "Team offsite", "The offsite is on January 20th in Lakeside."),
    ("inbox", "Password reset", "Click the link to reset your password."),
    ("inbox", "Lunch next week?", "Are you free on Tuesday for lunch?"),
    ("inbox", "Flight confirmation", "Your flight LX318 departs Jan 14 at 07:40."),
    ("inbox", "Newsletter", "This week: ten tips for better sleep."),
    ("sent", "Re: Project review", "I will bring the slides."),
    ("drafts", "Vacation plans", "Thinking of Lisbon in March."),
    ("archive", "Receipt", "Thanks for your order #1042."),
    ("trash", "Spam offer", "You won a prize!"),
)
_PLACES = (
    ("Green Bowl", "restaurant", "12 Elm St"), ("Blue Door Cafe", "cafe", "3 Harbor Rd"),
    ("City Gym", "gym", "88 Main St"), ("Smile Clinic", "health", "41 Oak Ave"),
    ("Central Library", "library", "1 Library Sq"), ("Sunrise Bakery", "bakery", "7 Pine St"),
    ("Metro Pharmacy", "pharmacy", "19 Main St"), ("Lakeside Park", "park", "Lakeshore Dr"),
    ("Golden Dragon", "restaurant", "55 River Rd"), ("Fresh Market", "grocery", "230 Market St"),
)
_PRODUCTS = (
    ("USB-C cable", "electronics", 9.99), ("Wireless mouse", "electronics", 24.5),
    ("Noise cancelling headphones", "electronics", 199.0), ("Coffee beans 1kg", "grocery", 18.75),
    ("Green tea", "grocery", 6.4), ("Yoga mat", "sports", 29.9), ("Running shoes", "sports", 89.0),
    ("Water bottle", "sports", 14.0), ("Desk lamp", "home", 34.99), ("Scented candle", "home", 12.5),
    ("Notebook A5", "office", 4.25), ("Fountain pen", "office", 45.0),
)
_FILES = (
    ("IMG_0001.jpg", "photo", "Camera", ["beach"]), ("IMG_0002.jpg", "photo", "Camera", []),
    ("IMG_0003.jpg", "photo", "Family", ["parents"]), ("IMG_0004.jpg", "photo", "Family", []),
    ("IMG_0005.jpg", "photo", "Trips", ["lisbon", "sunset"]),
    ("Screenshot_0101.png", "photo", "Screenshots", []),
    ("Resume.pdf", "document", "Documents", ["work"]), ("Lease.pdf", "document", "Documents", []),
    ("Budget_2026.xlsx", "document", "Documents", ["work", "finance"]),
    ("Meeting_0105.m4a", "audio", "Recordings", []), ("Voice_note.m4a", "audio", "Recordings", []),
    ("Boarding_pass.pdf", "document", "Downloads", ["travel"]),
)


def _email(name: str) -> str:
    first, last = name.lower().split(" ", 1)
    return f"{first}.{last.replace(' ', '')}@example.com"


def _end(start: str, minutes: int) -> str:
    hour, minute = int(start[11:13]), int(start[14:16])
    total = hour * 60 + minute + minutes
    return f"{start[:11]}{total // 60:02d}:{total % 60:02d}"


def default_world(seed: int = WORLD_SEED) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """The default tables for every app, fully determined by `seed` (ids are stable)."""
    rng = random.Random(seed)
    names = [p[0] for p in _PEOPLE]
    contacts = [
        {"id": f"ct{i}", "name": name, "phone": f"+1-555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
         "email": _email(name), "company": company, "starred": i in (1, 4)}
        for i, (name, company) in enumerate(_PEOPLE, start=1)
    ]
    events = [
        {"id": f"ev{i}", "title": title, "start": start, "end": _end(start, minutes),
         "location": location, "attendees": sorted(rng.sample(names, rng.randint(0, 3))),
         "notes": ""}
        for i, (title, start, minutes, location) in enumerate(_EVENTS, start=1)
    ]
    messages = []
    for i, body in enumerate(_MESSAGE_BODIES, start=1):
        c = contacts[rng.randrange(len(contacts))]
        direction = "in" if i % 3 else "out"
        messages.append({
            "id": f"msg{i}", "contact": c["name"], "phone": c["phone"], "direction": direction,
            "body": body, "sent_at": f"2025-12-{10 + i:02d}T{8 + i % 10:02d}:{rng.randrange(60):02d}",
            "read": direction == "out" or i < 9,
        })
    alarms = [
        {"id": "al1", "time": "06:30", "label": "Wake up", "enabled": True,
         "days": ["mon", "tue", "wed", "thu", "fri"]},
        {"id": "al2", "time": "08:00", "label": "Weekend", "enabled": False, "days": ["sat", "sun"]},
        {"id": "al3", "time": "21:45", "label": "Take vitamins", "enabled": True, "days": []},
    ]
    notes = [
        {"id": f"nt{i}", "title": t, "body": b, "folder": f, "pinned": p}
        for i, (t, b, f, p) in enumerate(_NOTES, start=1)
    ]
    emails = []
    for i, (folder, subject, body) in enumerate(_EMAILS, start=1):
        other = _email(names[rng.randrange(len(names))])
        outgoing = folder in ("sent", "drafts")
        emails.append({
            "id": f"em{i}", "folder": folder, "sender": "me@example.com" if outgoing else other,
            "to": [other] if outgoing else ["me@example.com"], "subject": subject, "body": body,
            "received_at": f"2025-12-{15 + i:02d}T{7 + i:02d}:{rng.randrange(60):02d}",
            "read": outgoing or i > 3, "starred": i == 5,
        })
    places = [
        {"id": f"pl{i}", "name": n, "category": c, "address": a,
         "rating": round(rng.uniform(3.2, 4.9), 1)}
        for i, (n, c, a) in enumerate(_PLACES, start=1)
    ]
    saved = [{"id": "sv1", "place_id": "pl1", "list": "Favorites"},
             {"id": "sv2", "place_id": "pl8", "list": "Want to go"}]
    trips = [{"id": "tr1", "origin": "Home", "destination": "City Gym", "mode": "walk", "eta_min": 18}]
    products = [
        {"id": f"pr{i}", "name": n, "category": c, "price": p, "stock": rng.randint(0, 40) if i != 3 else 0}
        for i, (n, c, p) in enumerate(_PRODUCTS, start=1)
    ]
    orders = [{"id": "or1", "items": [{"product_id": "pr4", "quantity": 2}], "total": 37.5,
               "address": "1 Home St", "status": "delivered"}]
    files = [
        {"id": f"f{i}", "path": f"/sdcard/{album}/{name}", "name": name, "kind": kind,
         "album": album, "tags": list(tags), "size_kb": rng.randint(40, 5000),
         "created_at": f"2025-12-{i + 5:02d}T{9 + i % 8:02d}:{rng.randrange(60):02d}"}
        for i, (name, kind, album, tags) in enumerate(_FILES, start=1)
    ]
    return {
        **_more_apps(rng),
        "contacts": {"contacts": contacts},
        "calendar": {"events": events},
        "messages": {"messages": messages},
        "clock": {"alarms": alarms, "timers": []},
        "notes": {"notes": notes},
        "email": {"emails": emails},
        "maps": {"places": places, "saved": saved, "trips": trips},
        "shopping": {"products": products, "cart": [], "orders": orders},
        "files": {"files": files},
    }


def _more_apps(rng: random.Random) -> dict[str, Any]:
    """Background rows of the bank, health, music, travel, recipes, weather and reminders apps."""
    accounts = [{"id": "ac1", "name": "Everyday", "number": "•••• 1204", "balance": 1840.25, "currency": "USD"},
                {"id": "ac2", "name": "Savings", "number": "•••• 7781", "balance": 9200.0, "currency": "USD"}]
    transactions = [
        {"id": f"tx{i}", "account_id": "ac1", "date": f"2025-12-{10 + i:02d}", "description": d,
         "counterparty": c, "amount": a, "category": k, "reference": f"REF{rng.randrange(10**6):06d}"}
        for i, (d, c, a, k) in enumerate((
            ("Card payment", "Fresh Market", -54.2, "groceries"), ("Salary", "Northwind", 3200.0, "income"),
            ("Card payment", "Metro Pharmacy", -12.8, "health"), ("Direct debit", "City Power", -61.0, "bills")),
            start=1)]
    tracks = [{"id": f"tk{i}", "title": t, "artist": a, "album": al, "minutes": m, "liked": False}
              for i, (t, a, al, m) in enumerate((
                  ("Morning Light", "The Harbors", "Tides", 4), ("Paper Planes", "Nova Lane", "Skylines", 3),
                  ("Slow River", "The Harbors", "Tides", 5)), start=1)]
    days = [{"date": f"2026-01-{d:02d}", "high": 8 + d % 5, "low": 1 + d % 3,
             "condition": ("sunny", "cloudy", "rain")[d % 3], "rain_pct": (10, 40, 80)[d % 3]}
            for d in range(1, 15)]
    return {
        "bank": {"accounts": accounts, "transactions": transactions, "payees": [], "payments": []},
        "health": {"activities": [{"id": "ha1", "kind": "walk", "minutes": 35, "date": "2025-12-30",
                                   "calories": 140}],
                   "measurements": [], "medications": []},
        "music": {"tracks": tracks, "playlists": [{"id": "pls1", "name": "Chill", "track_ids": ["tk3"]}]},
        "travel": {"flights": [], "hotels": [],
                   "bookings": [{"id": "bk1", "kind": "hotel", "ref_id": "ho0", "passengers": 1, "nights": 2,
                                 "check_in": "2025-11-20", "total": 240.0, "status": "completed"}]},
        "recipes": {"recipes": [{"id": "rc1", "title": "Tomato soup", "cuisine": "Italian", "minutes": 30,
                                 "servings": 4, "ingredients": ["tomatoes", "onion", "basil"],
                                 "favorite": False, "rating": 0}]},
        "weather": {"cities": [{"id": "wc1", "name": "Home Town", "saved": True, "days": days}]},
        "reminders": {"reminders": [{"id": "rm1", "title": "Renew passport", "due": None,
                                     "list": "Reminders", "done": False}]},
    }
