"""The calendar app: events with a start, an end, a location and attendees; its tools and screens."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import array, integer, string
from devices.sim.apps.common import (
    DATE,
    DATETIME,
    match_fields,
    out,
    parse_dt,
    pick_changes,
    require,
    sort_by,
)
from devices.sim.apps.crud import delete_tool, get_tool, list_tool, search_tool
from devices.sim.apps.records import editable_screens, row_item
from devices.sim.apps.ui import split_list
from devices.sim.state import SimState
from devices.sim.tools import BadArguments, NotFound, tool

__all__ = ["DAY_END", "DAY_START"]

# Free slots are searched within working hours only, as a person would expect.
DAY_START = "08:00"
DAY_END = "20:00"
_FIELDS = ("title", "start", "end", "location", "attendees", "notes")
_sorted = sort_by("start", "id")
# What the search tool and the list screen's search field look in.
_TEXT = match_fields(("title", "location", "attendees", "notes"))


def _check_span(start: str, end: str) -> None:
    if parse_dt(end, "end") <= parse_dt(start, "start"):
        raise BadArguments("Argument 'end' must be after argument 'start'.")


list_tool("calendar.list_events", "List events, optionally only those on one date.",
          "Event records sorted by start.", "events", order=_sorted,
          where=lambda r, args: "date" not in args or r["start"].startswith(args["date"]),
          optional={"date": string("Date 'YYYY-MM-DD'.", pattern=DATE)})


search_tool("calendar.search", "Find events whose title, location, attendees or notes contain the query.",
            "Matching event records.", "events", _TEXT, order=_sorted)


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


def _form_arguments(values: dict[str, str]) -> dict[str, Any]:
    return {"title": values["title"].strip(), "start": values["start"].strip(), "end": values["end"].strip(),
            "location": values["location"].strip(), "attendees": split_list(values["attendees"])}


SCREENS = editable_screens(
    "calendar", "events", "event", "Calendar",
    lambda r: row_item(r, r["title"], f"{r['start'].replace('T', ' ')}–{r['end'][11:]}"),
    search=_TEXT, order=_sorted, actions=[("New event", "add", lambda g: g.open("form"))],
    heading=lambda r: r["title"],
    lines=lambda r: [("Starts", r["start"].replace("T", " "), "start"), ("Ends", r["end"].replace("T", " "), "end"),
                     ("Location", r["location"], "location"), ("Guests", r["attendees"], "attendees")],
    fields=[("title", "Title"), ("start", "Start YYYY-MM-DDTHH:MM"), ("end", "End YYYY-MM-DDTHH:MM"),
            ("location", "Location"), ("attendees", "Guests, comma separated")],
    arguments=_form_arguments, create="calendar.create_event", update="calendar.update_event",
    delete="calendar.delete_event")
