"""The phone's apps: their tables, the settings and their ranges, app names and the default task.

Every phone (simulated or real) has the same apps and settings; a task's initial state and a
final state name them the same way.
"""

from __future__ import annotations

from typing import Any

from devices.kit.errors import BadArguments
from devices.protocol import TaskInstance

__all__ = ["APPS", "APP_LABELS", "DEFAULT_TASK", "SETTINGS_SPEC", "TABLES", "check_value",
           "resolve_app"]

# app → table → id prefix. The prefixes make ids readable ("ct3" is a contact) and stable.
TABLES: dict[str, dict[str, str]] = {
    "contacts": {"contacts": "ct"},
    "calendar": {"events": "ev"},
    "messages": {"messages": "msg"},
    "clock": {"alarms": "al", "timers": "tm"},
    "notes": {"notes": "nt"},
    "settings": {},
    "email": {"emails": "em"},
    "maps": {"places": "pl", "saved": "sv", "trips": "tr"},
    "shopping": {"products": "pr", "cart": "ci", "orders": "or"},
    "files": {"files": "f"},
    "bank": {"accounts": "ac", "transactions": "tx", "payees": "py", "payments": "pm"},
    "health": {"activities": "ha", "measurements": "hm", "medications": "md"},
    "music": {"tracks": "tk", "playlists": "pls"},
    "travel": {"flights": "fl", "hotels": "ho", "bookings": "bk"},
    "recipes": {"recipes": "rc"},
    "weather": {"cities": "wc"},
    "reminders": {"reminders": "rm"},
}
APPS: tuple[str, ...] = tuple(TABLES)

# setting key → (default, kind, low, high); kind "bool" or "int" with an inclusive range.
SETTINGS_SPEC: dict[str, tuple[Any, str, int, int]] = {
    "wifi": (True, "bool", 0, 1),
    "bluetooth": (False, "bool", 0, 1),
    "airplane_mode": (False, "bool", 0, 1),
    "do_not_disturb": (False, "bool", 0, 1),
    "dark_mode": (False, "bool", 0, 1),
    "brightness": (60, "int", 0, 100),
    "volume_ring": (5, "int", 0, 7),
    "location": (True, "bool", 0, 1),
    "battery_saver": (False, "bool", 0, 1),
}

# app → the name its launcher icon shows (each sim app module's LABEL).
APP_LABELS: dict[str, str] = {
    "contacts": "Contacts", "calendar": "Calendar", "messages": "Messages", "clock": "Clock",
    "notes": "Notes", "settings": "Settings", "email": "Email", "maps": "Maps",
    "shopping": "Shopping", "files": "Files", "bank": "Bank", "health": "Health",
    "music": "Music", "travel": "Travel", "recipes": "Recipes", "weather": "Weather",
    "reminders": "Reminders",
}
# Other words people use for the same app.
_ALIASES = {"alarm": "clock", "alarms": "clock", "sms": "messages", "mail": "email",
            "gmail": "email", "gallery": "files", "photos": "files", "shop": "shopping",
            "store": "shopping", "phone book": "contacts", "people": "contacts",
            "keep": "notes", "agenda": "calendar", "navigation": "maps"}

# Used until a device's first reset(): the default world, the contract's default start clock.
DEFAULT_TASK = TaskInstance(task_id="sim-default", template="default", family="tool", split="train",
                            index=0, seed=0, goal="Explore the phone.")


def resolve_app(name: str) -> str | None:
    """The app an open_app name means (its name, its label or a common alias), or None."""
    key = name.strip().lower()
    if key in APP_LABELS:
        return key
    for app, label in APP_LABELS.items():
        if label.lower() == key:
            return app
    return _ALIASES.get(key)


def check_value(key: str, value: Any) -> Any:
    """The value converted to the setting's type, or BadArguments naming the expected range."""
    _, kind, low, high = SETTINGS_SPEC[key]
    if kind == "bool":
        if type(value) is bool:
            return value
        if isinstance(value, str) and value.lower() in ("on", "off", "true", "false"):
            return value.lower() in ("on", "true")
        raise BadArguments(f"Argument 'value' for '{key}' must be true or false.")
    if type(value) is bool or not isinstance(value, (int, float, str)):
        raise BadArguments(f"Argument 'value' for '{key}' must be a whole number from {low} to {high}.")
    try:
        number = int(value)
    except ValueError:
        raise BadArguments(f"Argument 'value' for '{key}' must be a whole number from {low} to {high}.") from None
    if not low <= number <= high or number != float(value):
        raise BadArguments(f"Argument 'value' for '{key}' must be a whole number from {low} to {high}.")
    return number
