"""The maps app: places, saved lists and trips with travel times; its tools and screens."""

from __future__ import annotations

import zlib
from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import number, string
from devices.sim.apps.common import find_named, match_fields, out, require, sort_by
from devices.sim.apps.crud import delete_tool, get_tool, list_tool, search_tool
from devices.sim.apps.records import record_detail, record_list, row_item
from devices.sim.apps.ui import list_screen
from devices.sim.state import SimState
from devices.sim.tools import NotFound, tool

__all__ = ["LABEL", "MODES", "ROOT", "SCREENS", "eta_minutes"]

MODES = ["drive", "walk", "transit"]
# Minutes per "distance unit" per mode: walking is slowest, driving fastest (plausible ratios).
_PACE = {"drive": 1, "walk": 6, "transit": 2}
_MODE = string("Travel mode.", enum=MODES)
# What maps.search_places and the list screen's search field look in.
_TEXT = match_fields(("name", "address", "category"))


def eta_minutes(origin: str, destination: str, mode: str) -> int:
    """A deterministic travel time: a stable pseudo-distance (crc32 of the pair) times the pace."""
    pair = "|".join(sorted((origin.strip().lower(), destination.strip().lower())))
    distance = 3 + zlib.crc32(pair.encode()) % 20
    return distance * _PACE[mode]


search_tool("maps.search_places", "Find places by name, address or category.", "Place records, best rated first.",
            "places", _TEXT,
            where=lambda r, args: ("category" not in args or r["category"] == args["category"])
            and r["rating"] >= args.get("min_rating", 0),
            order=lambda rows: sorted(rows, key=lambda r: (-r["rating"], r["id"])),
            optional={"category": string("Only this category."),
                      "min_rating": number("Lowest rating.", minimum=0, maximum=5)})


get_tool("maps.get_place", "places", "place", "Place id, e.g. 'pl1'.")


@tool("maps.save_place", "Save a place to a list (e.g. 'Favorites').", "The saved record.",
      {"place_id": string("Place id.", minLength=1), "list": string("List name.", minLength=1)})
def save_place(state: SimState, args: dict[str, Any]) -> Any:
    require(state, "maps", "places", args["place_id"], "place")
    for row in state.table("maps", "saved").values():
        if row["place_id"] == args["place_id"] and row["list"] == args["list"]:
            return out(row)
    row = {"id": state.new_id("maps", "saved"), "place_id": args["place_id"], "list": args["list"]}
    return out(state.put("maps", "saved", row))


@tool("maps.list_saved", "List saved places, optionally in one list.", "Saved records with the place.",
      optional={"list": string("List name.", minLength=1)})
def list_saved(state: SimState, args: dict[str, Any]) -> Any:
    places = state.table("maps", "places")
    return [{**out(r), "place": out(places[r["place_id"]]) if r["place_id"] in places else None}
            for r in state.table("maps", "saved").values()
            if "list" not in args or r["list"] == args["list"]]


delete_tool("maps.unsave_place", "Remove a saved place.", "The removed saved record.",
            "saved", "saved place", "Saved id, e.g. 'sv1'.")


@tool("maps.navigate", "Start navigation from Home to a place (name or id).", "The new trip record.",
      {"destination": string("Place name or id.", minLength=1), "mode": _MODE},
      {"origin": string("Start (default 'Home').", minLength=1)})
def navigate(state: SimState, args: dict[str, Any]) -> Any:
    place = find_named(state, "maps", "places", args["destination"], alt="id")
    if place is None:
        raise NotFound(f"There is no place called '{args['destination']}'; search for it first.")
    origin = args.get("origin", "Home")
    row = {"id": state.new_id("maps", "trips"), "origin": origin, "destination": place["name"],
           "mode": args["mode"], "eta_min": eta_minutes(origin, place["name"], args["mode"])}
    return out(state.put("maps", "trips", row))


@tool("maps.eta", "Travel time between two places.", "{'origin', 'destination', 'mode', 'eta_min'}.",
      {"origin": string("Start.", minLength=1), "destination": string("End.", minLength=1), "mode": _MODE})
def eta(state: SimState, args: dict[str, Any]) -> Any:
    return {"origin": args["origin"], "destination": args["destination"], "mode": args["mode"],
            "eta_min": eta_minutes(args["origin"], args["destination"], args["mode"])}


list_tool("maps.list_trips", "List past and current trips.", "Trip records.", "trips")


# ---- screens -------------------------------------------------------------------------------

LABEL = APP_LABELS["maps"]
ROOT = "list"


def _item(row: dict[str, Any]) -> tuple:
    return row_item(row, row["name"], f"{row['category']} · {row['rating']}★ · {row['address']}")


def _saved(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    places = state.table("maps", "places")
    items = [_item(places[r["place_id"]])[:1] + (r["list"],) + _item(places[r["place_id"]])[2:]
             for r in state.table("maps", "saved").values() if r["place_id"] in places]
    list_screen(b, frame, "Saved places", items, up=True)


def _buttons(b: Any, state: SimState, row: dict[str, Any]) -> None:
    def save(g: Any, i: str = row["id"]) -> str:
        g.call("maps.save_place", {"place_id": i, "list": "Favorites"})
        return "Saved to Favorites."

    def go(mode: str) -> Any:
        def run(g: Any, i: str = row["id"]) -> str:
            trip = g.call("maps.navigate", {"destination": i, "mode": mode})
            return f"Navigating by {mode}: {trip['eta_min']} min."
        return run

    b.button("Save", "save", save)
    b.button("Directions (drive)", "drive", go("drive"))
    b.button("Directions (walk)", "walk", go("walk"))
    b.button("Directions (transit)", "transit", go("transit"))


SCREENS = {
    "list": record_list("maps", "places", "Maps", _item, search=_TEXT, order=sort_by("name"),
                        actions=[("Saved", "saved", lambda g: g.open("saved"))]),
    "saved": _saved,
    "detail": record_detail("maps", "places", "place", lambda r: r["name"],
                            lambda r: [("Category", r["category"], "category"), ("Address", r["address"], "address"),
                                       ("Rating", r["rating"], "rating")], _buttons),
}
