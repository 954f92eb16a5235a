"""The calendar app: events with a start, an end, a location and attendees; its tools and screens."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import array, integer, string
from devices.sim.apps.common import (
    DATE,
    DATETIME,
    matches,
    out,
    outs,
    parse_dt,
    pick_changes,
    require,
)
from devices.sim.apps.records import delete_button, delete_tool, get_tool
from devices.sim.apps.ui import detail_header, form_screen, list_screen, missing, split_list
from devices.sim.state import SimState
from devices.sim.tools import BadArguments, NotFound, tool

__all__ = ["DAY_END", "DAY_START"]

# Free slots are searched within working hours only, as a person would expect.
DAY_START = "08:00"
DAY_END = "20:00"
_FIELDS = ("title", "start", "end", "location", "attendees", "notes")


def _sorted(rows: Any) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (r["start"], r["id"]))


def _check_span(start: str, end: str) -> None:
    if parse_dt(end, "end") <= parse_dt(start, "start"):
        raise BadArguments("Argument 'end' must be after argument 'start'.")


@tool("calendar.list_events", "List events, optionally only those on one date.",
      "Event records sorted by start.", optional={"date": string("Date 'YYYY-MM-DD'.", pattern=DATE)})
def list_events(state: SimState, args: dict[str, Any]) -> Any:
    rows = state.table("calendar", "events").values()
    if "date" in args:
        rows = [r for r in rows if r["start"].startswith(args["date"])]
    return outs(_sorted(rows))


@tool("calendar.search", "Find events whose title, location, attendees or notes contain the query.",
      "Matching event records.", {"query": string("Text to look for.", minLength=1)})
def search(state: SimState, args: dict[str, Any]) -> Any:
    q = args["query"]
    return outs(_sorted(r for r in state.table("calendar", "events").values()
                        if matches(q, r["title"], r["location"], r["attendees"], r["notes"])))


get_tool("calendar.get_event", "events", "event", "Event id, e.g. 'ev1'.")


@tool("calendar.create_event", "Create a calendar event.", "The new event record.",
      {"title": string("Event title.", minLength=1),
       "start": string("Start 'YYYY-MM-DDTHH:MM'.", pattern=DATETIME),
       "end": string("End 'YYYY-MM-DDTHH:MM'.", pattern=DATETIME)},
      {"location": string("Where."), "attendees": array(string("A name."), "People invited."),
       "notes": string("Free text.")})
def create_event(state: SimState, args: dict[str, Any]) -> Any:
    _check_span(args["start"], args["end"])
    row = {"id": state.new_id("calendar", "events"), "title": args["title"],
           "start": args["start"], "end": args["end"], "location": args.get("location", ""),
           "attendees": list(args.get("attendees", [])), "notes": args.get("notes", "")}
    return out(state.put("calendar", "events", row))


@tool("calendar.update_event", "Change fields of an event.", "The updated event record.",
      {"id": string("Event id.", minLength=1)},
      {"title": string("New title.", minLength=1),
       "start": string("New start.", pattern=DATETIME), "end": string("New end.", pattern=DATETIME),
       "location": string("New location."), "attendees": array(string("A name."), "New attendees."),
       "notes": string("New notes.")})
def update_event(state: SimState, args: dict[str, Any]) -> Any:
    row = require(state, "calendar", "events", args["id"], "event")
    changes = pick_changes(args, _FIELDS)
    _check_span(changes.get("start", row["start"]), changes.get("end", row["end"]))
    return out(state.update("calendar", "events", args["id"], changes))


delete_tool("calendar.delete_event", "Delete an event.", "The deleted event record.",
            "events", "event", "Event id.")


@tool("calendar.find_free_slot",
      f"Find the first free slot of the given length on a date between {DAY_START} and {DAY_END}.",
      "{'start', 'end'} of the slot.",
      {"date": string("Date 'YYYY-MM-DD'.", pattern=DATE),
       "duration_min": integer("Length in minutes.", minimum=5, maximum=720)})
def find_free_slot(state: SimState, args: dict[str, Any]) -> Any:
    day = args["date"]
    cursor = parse_dt(f"{day}T{DAY_START}", "date")
    limit = parse_dt(f"{day}T{DAY_END}", "date")
    need = timedelta(minutes=args["duration_min"])
    busy = sorted((parse_dt(r["start"], "start"), parse_dt(r["end"], "end"))
                  for r in state.table("calendar", "events").values() if r["start"].startswith(day))
    for start, end in busy:
        if start - cursor >= need:
            break
        cursor = max(cursor, end)
    if cursor + need > limit:
        raise NotFound(f"There is no free slot of {args['duration_min']} minutes on {day}.")
    fmt = "%Y-%m-%dT%H:%M"
    return {"start": cursor.strftime(fmt), "end": (cursor + need).strftime(fmt)}


# ---- screens -------------------------------------------------------------------------------

LABEL = APP_LABELS["calendar"]
ROOT = "list"


def _item(row: dict[str, Any]) -> tuple:
    return (row["title"], f"{row['start'].replace('T', ' ')}–{row['end'][11:]}",
            lambda g, i=row["id"]: g.open("detail", id=i), None, None, None)


def _list(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    rows = _sorted(state.table("calendar", "events").values())
    list_screen(b, frame, "Calendar", [_item(r) for r in rows],
                search=lambda q: [_item(r) for r in rows
                                  if matches(q, r["title"], r["location"], r["attendees"], r["notes"])],
                actions=[("New event", "add", lambda g: g.open("form"))])


def _detail(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    row = state.get("calendar", "events", frame["params"]["id"])
    if row is None:
        return missing(b, "event")
    detail_header(b, row["title"], [("Starts", row["start"].replace("T", " "), "start"),
                                    ("Ends", row["end"].replace("T", " "), "end"),
                                    ("Location", row["location"], "location"),
                                    ("Guests", row["attendees"], "attendees")])
    b.button("Edit", "edit", lambda g, i=row["id"]: g.open("form", id=i))
    delete_button(b, "calendar.delete_event", row["id"], "Event deleted.")


def _form(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    row_id = frame["params"].get("id")
    row = state.get("calendar", "events", row_id) if row_id else None

    def save(g: Any, values: dict[str, str]) -> str:
        args = {"title": values["title"].strip(), "start": values["start"].strip(),
                "end": values["end"].strip(), "location": values["location"].strip(),
                "attendees": split_list(values["attendees"])}
        if row is None:
            g.call("calendar.create_event", args)
        else:
            g.call("calendar.update_event", {"id": row["id"], **args})
        g.back()
        return "Event saved."

    form_screen(b, frame, "Edit event" if row else "New event",
                [("title", "Title"), ("start", "Start YYYY-MM-DDTHH:MM"), ("end", "End YYYY-MM-DDTHH:MM"),
                 ("location", "Location"), ("attendees", "Guests, comma separated")], save, initial=row)


SCREENS = {"list": _list, "detail": _detail, "form": _form}
