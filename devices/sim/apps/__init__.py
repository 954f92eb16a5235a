"""The simulated apps: importing this package registers every app's tools (and screens)."""

from __future__ import annotations

from devices.sim.apps import (
    calendar,
    clock,
    contacts,
    email,
    files,
    maps,
    messages,
    notes,
    settings,
    shopping,
)

__all__ = ["APP_MODULES"]

APP_MODULES = {
    "contacts": contacts, "calendar": calendar, "messages": messages, "clock": clock,
    "notes": notes, "settings": settings, "email": email, "maps": maps, "shopping": shopping,
    "files": files,
}
