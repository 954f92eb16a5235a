"""The health app: logged activities, body measurements and medication reminders."""

from __future__ import annotations

from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import boolean, integer, number, string
from devices.sim.apps.common import DATE, TIME, out, outs, sort_by
from devices.sim.apps.crud import delete_tool, list_tool, update_tool
from devices.sim.apps.records import record_screens
from devices.sim.state import SimState
from devices.sim.tools import tool

__all__ = ["ACTIVITIES", "LABEL", "MEASURES", "ROOT", "SCREENS"]

ACTIVITIES = ("run", "walk", "cycle", "swim", "yoga", "strength")
MEASURES = ("weight_kg", "resting_heart_rate", "sleep_hours", "steps", "blood_pressure_sys")
# Rough kcal per minute by activity, for the calories the app shows.
_KCAL = {"run": 11, "walk": 4, "cycle": 8, "swim": 9, "yoga": 3, "strength": 6}
_newest = sort_by("date", "id", reverse=True)


@tool("health.log_activity", "Log an activity session.", "The activity record.",
      {"kind": string("Activity.", enum=list(ACTIVITIES)), "minutes": integer("Duration.", minimum=1, maximum=600),
       "date": string("Day (YYYY-MM-DD).", pattern=DATE)})
def log_activity(state: SimState, args: dict[str, Any]) -> Any:
    row = {"id": state.new_id("health", "activities"), "kind": args["kind"], "minutes": args["minutes"],
           "date": args["date"], "calories": _KCAL[args["kind"]] * args["minutes"]}
    return out(state.put("health", "activities", row))


list_tool("health.list_activities", "List logged activities, optionally of one kind or day.",
          "Activity records, newest first.", "activities", order=_newest,
          where=lambda r, args: args.get("kind", r["kind"]) == r["kind"] and args.get("date", r["date"]) == r["date"],
          optional={"kind": string("Activity.", enum=list(ACTIVITIES)), "date": string("Day.", pattern=DATE)})


delete_tool("health.delete_activity", "Delete a logged activity.", "The deleted record.",
            "activities", "activity", "Activity id.")


@tool("health.log_measurement", "Record a body measurement.", "The measurement record.",
      {"kind": string("What was measured.", enum=list(MEASURES)), "value": number("The value."),
       "date": string("Day (YYYY-MM-DD).", pattern=DATE)})
def log_measurement(state: SimState, args: dict[str, Any]) -> Any:
    row = {"id": state.new_id("health", "measurements"), "kind": args["kind"], "value": args["value"],
           "date": args["date"]}
    return out(state.put("health", "measurements", row))


@tool("health.list_measurements", "List measurements of one kind, newest first.", "Measurement records.",
      {"kind": string("What was measured.", enum=list(MEASURES))})
def list_measurements(state: SimState, args: dict[str, Any]) -> Any:
    return outs(_newest(r for r in state.table("health", "measurements").values() if r["kind"] == args["kind"]))


list_tool("health.list_medications", "List medication reminders.", "Medication records.", "medications")


update_tool("health.update_medication", "Change a medication reminder's dose, time or whether it is active.",
            "The updated record.", "medications", "medication", "Medication id.",
            {"dose": string("Dose, e.g. '5 mg'.", minLength=1), "time": string("Time (HH:MM).", pattern=TIME),
             "active": boolean("Whether it reminds me.")})


# ---- screens -------------------------------------------------------------------------------

LABEL = APP_LABELS["health"]
ROOT = "list"
_ACT = record_screens(
    "health", "activities", "Activities", row_title=lambda r: f"{r['kind'].title()} {r['minutes']} min",
    row_subtitle=lambda r: r["date"], order=lambda r: r["date"],
    lines=lambda r: [("Date", r["date"], "date"), ("Calories", r["calories"], "calories")], what="activity")
SCREENS = dict(_ACT)
