"""The weather app: per-city daily forecasts and my saved cities."""

from __future__ import annotations

from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import string
from devices.sim.apps.common import DATE, find_named, now_iso, out, outs
from devices.sim.apps.records import record_screens
from devices.sim.state import SimState
from devices.sim.tools import Conflict, NotFound, tool

__all__ = ["LABEL", "ROOT", "SCREENS"]


def _city(state: SimState, name: str) -> dict[str, Any]:
    row = find_named(state, "weather", "cities", name)
    if row is None:
        raise NotFound(f"There is no forecast for '{name}'.")
    return row


@tool("weather.forecast", "The daily forecast of a city, or of one day there.",
      "Days with 'date', 'high', 'low', 'condition', 'rain_pct'.",
      {"city": string("City name.", minLength=1)}, {"date": string("Day (YYYY-MM-DD).", pattern=DATE)})
def forecast(state: SimState, args: dict[str, Any]) -> Any:
    days = _city(state, args["city"])["days"]
    return outs(d for d in days if args.get("date", d["date"]) == d["date"])


@tool("weather.current", "Today's weather in a city.", "One day's forecast.",
      {"city": string("City name.", minLength=1)})
def current(state: SimState, args: dict[str, Any]) -> Any:
    today = now_iso(state)[:10]
    for day in _city(state, args["city"])["days"]:
        if day["date"] == today:
            return out(day)
    raise NotFound("No forecast for today.")


@tool("weather.list_saved", "List my saved cities.", "City records (without forecasts).")
def list_saved(state: SimState, args: dict[str, Any]) -> Any:
    return [{"id": r["id"], "name": r["name"]} for r in state.table("weather", "cities").values() if r["saved"]]


@tool("weather.save_city", "Save a city to my list.", "The city (without forecast).",
      {"city": string("City name.", minLength=1)})
def save_city(state: SimState, args: dict[str, Any]) -> Any:
    row = _city(state, args["city"])
    if row["saved"]:
        raise Conflict(f"{row['name']} is already saved.")
    state.update("weather", "cities", row["id"], {"saved": True})
    return {"id": row["id"], "name": row["name"]}


@tool("weather.remove_city", "Remove a city from my list.", "The city (without forecast).",
      {"city": string("City name.", minLength=1)})
def remove_city(state: SimState, args: dict[str, Any]) -> Any:
    row = _city(state, args["city"])
    if not row["saved"]:
        raise Conflict(f"{row['name']} is not saved.")
    state.update("weather", "cities", row["id"], {"saved": False})
    return {"id": row["id"], "name": row["name"]}


# ---- screens -------------------------------------------------------------------------------

LABEL = APP_LABELS["weather"]
ROOT = "list"
SCREENS = record_screens(
    "weather", "cities", "Weather", row_title=lambda r: r["name"],
    row_subtitle=lambda r: "saved" if r["saved"] else "", search=("name",),
    lines=lambda r: [(d["date"], f"{d['condition']} {d['low']}–{d['high']}°C, rain {d['rain_pct']}%", "day")
                     for d in r["days"]], what="city")
