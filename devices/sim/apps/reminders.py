"""The reminders app: to-dos with a due time, a list and a done flag."""

from __future__ import annotations

from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import boolean, string
from devices.sim.apps.common import DATETIME, match_fields, out
from devices.sim.apps.crud import (
    change_tool,
    delete_tool,
    get_tool,
    list_tool,
    search_tool,
    update_tool,
)
from devices.sim.apps.records import record_screens
from devices.sim.state import SimState
from devices.sim.tools import tool

__all__ = ["LABEL", "ROOT", "SCREENS"]

# Where a reminder goes when nobody names a list.
DEFAULT_LIST = "Reminders"


@tool("reminders.create", "Create a reminder.", "The reminder record.",
      {"title": string("What to remember.", minLength=1)},
      {"due": string("When (YYYY-MM-DDTHH:MM).", pattern=DATETIME), "list": string("List name.", minLength=1)})
def create(state: SimState, args: dict[str, Any]) -> Any:
    row = {"id": state.new_id("reminders", "reminders"), "title": args["title"], "due": args.get("due"),
           "list": args.get("list", DEFAULT_LIST), "done": False}
    return out(state.put("reminders", "reminders", row))


list_tool("reminders.list", "List reminders, optionally of one list or by done state.", "Reminder records.",
          "reminders", order=lambda rows: sorted(rows, key=lambda r: (r["due"] or "9999", r["id"])),
          where=lambda r, args: args.get("list", r["list"]).lower() == r["list"].lower()
          and args.get("done", r["done"]) == r["done"],
          optional={"list": string("List name.", minLength=1), "done": boolean("Done or open.")})


search_tool("reminders.search", "Find reminders whose title contains the query.", "Reminder records.", "reminders",
            match_fields(("title",)))


get_tool("reminders.get", "reminders", "reminder", "Reminder id.")


change_tool("reminders.complete", "Mark a reminder done.", "The reminder record.", "reminders", "reminder",
            "Reminder id.", lambda args: {"done": True})


update_tool("reminders.update", "Change a reminder's title, due time or list.", "The reminder record.",
            "reminders", "reminder", "Reminder id.",
            {"title": string("New title.", minLength=1), "due": string("New due time.", pattern=DATETIME),
             "list": string("New list.", minLength=1)})


delete_tool("reminders.delete", "Delete a reminder.", "The deleted record.",
            "reminders", "reminder", "Reminder id.")


# ---- screens -------------------------------------------------------------------------------

LABEL = APP_LABELS["reminders"]
ROOT = "list"
SCREENS = record_screens(
    "reminders", "reminders", "Reminders", row_title=lambda r: r["title"],
    row_subtitle=lambda r: f"{r['due'] or 'no date'} · {r['list']}{' · done' if r['done'] else ''}",
    search=("title",), order=lambda r: (r["due"] or "9999"),
    lines=lambda r: [("Due", r["due"] or "no date", "due"), ("List", r["list"], "list")], what="reminder")
