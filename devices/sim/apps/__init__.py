"""The simulated apps: importing this package registers every app's tools (and screens)."""

from __future__ import annotations

from devices.sim.apps import (
    bank,
    calendar,
    clock,
    contacts,
    email,
    files,
    health,
    maps,
    messages,
    music,
    notes,
    recipes,
    reminders,
    settings,
    shopping,
    travel,
    weather,
)

__all__ = ["APP_MODULES"]

APP_MODULES = {
    "contacts": contacts, "calendar": calendar, "messages": messages, "clock": clock,
    "notes": notes, "settings": settings, "email": email, "maps": maps, "shopping": shopping,
    "files": files, "bank": bank, "health": health, "music": music, "travel": travel,
    "recipes": recipes, "weather": weather, "reminders": reminders,
}
