"""The clock app: alarms and timers; its tools and screens."""

from __future__ import annotations

from typing import Any

from devices.sim.apps.common import TIME, now_iso, out, outs, pick_changes, require
from devices.sim.state import SimState
from devices.sim.tools import array, boolean, integer, string, tool

__all__ = ["DAYS"]

DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
_DAYS = array(string("A weekday.", enum=DAYS), "Weekdays it repeats on; empty = once.")


def _alarms(state: SimState) -> list[dict[str, Any]]:
    return sorted(state.table("clock", "alarms").values(), key=lambda r: (r["time"], r["id"]))


def add_alarm(state: SimState, time: str, label: str = "", days: list[str] | None = None,
              ) -> dict[str, Any]:
    row = {"id": state.new_id("clock", "alarms"), "time": time, "label": label, "enabled": True,
           "days": sorted(set(days or []), key=DAYS.index)}
    return state.put("clock", "alarms", row)


@tool("clock.now", "The current date and time on the phone.", "{'now': 'YYYY-MM-DDTHH:MM'}.")
def now(state: SimState, args: dict[str, Any]) -> Any:
    return {"now": now_iso(state)}


@tool("clock.set_alarm", "Set a new alarm (enabled).", "The new alarm record.",
      {"time": string("Time 'HH:MM' (24h).", pattern=TIME)},
      {"label": string("A label."), "days": _DAYS})
def set_alarm(state: SimState, args: dict[str, Any]) -> Any:
    return out(add_alarm(state, args["time"], args.get("label", ""), args.get("days")))


@tool("clock.list_alarms", "List alarms sorted by time.", "Alarm records.")
def list_alarms(state: SimState, args: dict[str, Any]) -> Any:
    return outs(_alarms(state))


@tool("clock.update_alarm", "Change an alarm's time, label or days.", "The updated alarm record.",
      {"id": string("Alarm id, e.g. 'al1'.", minLength=1)},
      {"time": string("New time 'HH:MM'.", pattern=TIME), "label": string("New label."),
       "days": _DAYS})
def update_alarm(state: SimState, args: dict[str, Any]) -> Any:
    require(state, "clock", "alarms", args["id"], "alarm")
    return out(state.update("clock", "alarms", args["id"], pick_changes(args, ("time", "label", "days"))))


@tool("clock.toggle_alarm", "Turn an alarm on or off.", "The updated alarm record.",
      {"id": string("Alarm id.", minLength=1), "enabled": boolean("True to turn on.")})
def toggle_alarm(state: SimState, args: dict[str, Any]) -> Any:
    require(state, "clock", "alarms", args["id"], "alarm")
    return out(state.update("clock", "alarms", args["id"], {"enabled": args["enabled"]}))


@tool("clock.delete_alarm", "Delete an alarm.", "The deleted alarm record.",
      {"id": string("Alarm id.", minLength=1)})
def delete_alarm(state: SimState, args: dict[str, Any]) -> Any:
    require(state, "clock", "alarms", args["id"], "alarm")
    return out(state.delete("clock", "alarms", args["id"]))


@tool("clock.start_timer", "Start a countdown timer.", "The new timer record.",
      {"seconds": integer("Duration in seconds.", minimum=1, maximum=86_400)},
      {"label": string("A label.")})
def start_timer(state: SimState, args: dict[str, Any]) -> Any:
    row = {"id": state.new_id("clock", "timers"), "seconds": args["seconds"],
           "label": args.get("label", "")}
    return out(state.put("clock", "timers", row))


@tool("clock.list_timers", "List running timers.", "Timer records.")
def list_timers(state: SimState, args: dict[str, Any]) -> Any:
    return outs(state.table("clock", "timers").values())


@tool("clock.cancel_timer", "Cancel a running timer.", "The cancelled timer record.",
      {"id": string("Timer id, e.g. 'tm1'.", minLength=1)})
def cancel_timer(state: SimState, args: dict[str, Any]) -> Any:
    require(state, "clock", "timers", args["id"], "timer")
    return out(state.delete("clock", "timers", args["id"]))
