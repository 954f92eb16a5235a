"""The clock app: alarms and timers; its tools and screens."""

from __future__ import annotations

from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import array, boolean, integer, string
from devices.sim.apps.common import TIME, now_iso, out, sort_by
from devices.sim.apps.crud import delete_tool, flag_tool, list_tool, update_tool
from devices.sim.apps.records import Toggle, editable_screens, row_item
from devices.sim.apps.ui import form_screen, list_screen, split_list
from devices.sim.state import SimState
from devices.sim.tools import BadArguments, tool

__all__ = ["DAYS", "LABEL", "ROOT", "SCREENS", "add_alarm"]

DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
_DAYS = array(string("A weekday.", enum=DAYS), "Weekdays it repeats on; empty = once.")


_by_time = sort_by("time", "id")


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


list_tool("clock.list_alarms", "List alarms sorted by time.", "Alarm records.", "alarms", order=_by_time)


update_tool("clock.update_alarm", "Change an alarm's time, label or days.", "The updated alarm record.",
            "alarms", "alarm", "Alarm id, e.g. 'al1'.",
            {"time": string("New time 'HH:MM'.", pattern=TIME), "label": string("New label."), "days": _DAYS})


flag_tool("clock.toggle_alarm", "Turn an alarm on or off.", "The updated alarm record.", "alarms", "alarm",
          "Alarm id.", "enabled", boolean("True to turn on."))


delete_tool("clock.delete_alarm", "Delete an alarm.", "The deleted alarm record.", "alarms", "alarm", "Alarm id.")


@tool("clock.start_timer", "Start a countdown timer.", "The new timer record.",
      {"seconds": integer("Duration in seconds.", minimum=1, maximum=86_400)},
      {"label": string("A label.")})
def start_timer(state: SimState, args: dict[str, Any]) -> Any:
    row = {"id": state.new_id("clock", "timers"), "seconds": args["seconds"],
           "label": args.get("label", "")}
    return out(state.put("clock", "timers", row))


list_tool("clock.list_timers", "List running timers.", "Timer records.", "timers")


delete_tool("clock.cancel_timer", "Cancel a running timer.", "The cancelled timer record.",
            "timers", "timer", "Timer id, e.g. 'tm1'.")


# ---- screens -------------------------------------------------------------------------------

LABEL = APP_LABELS["clock"]
ROOT = "list"
_ENABLED = Toggle("clock.toggle_alarm", "enabled", "Enabled", "Alarm on.", "Alarm off.")


def _days_text(days: list[str]) -> str:
    return ", ".join(days) if days else "once"


def _form_arguments(values: dict[str, str]) -> dict[str, Any]:
    return {"time": values["time"].strip(), "label": values["label"].strip(),
            "days": [d.lower()[:3] for d in split_list(values["days"])]}


def _timers(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    def cancel(g: Any, i: str) -> str:
        g.call("clock.cancel_timer", {"id": i})
        return "Timer cancelled."

    items = [(f"{r['seconds']} s", r["label"], None, lambda g, i=r["id"]: cancel(g, i), None, None)
             for r in state.table("clock", "timers").values()]
    list_screen(b, frame, "Timers", items, up=True,
                actions=[("Start timer", "start", lambda g: g.open("timer_form"))])


def _timer_form(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    def save(g: Any, values: dict[str, str]) -> str:
        seconds = values["seconds"].strip()
        if not seconds.isdigit():
            raise BadArguments("Type the timer length as a whole number of seconds.")
        g.call("clock.start_timer", {"seconds": int(seconds), "label": values["label"].strip()})
        g.back()
        return "Timer started."

    form_screen(b, frame, "New timer", [("seconds", "Seconds"), ("label", "Label")], save,
                save_text="Start")


SCREENS = {
    **editable_screens(
        "clock", "alarms", "alarm", "Alarms",
        lambda r: row_item(r, r["time"], f"{r['label'] or 'Alarm'} · {_days_text(r['days'])}",
                           checked=r["enabled"], toggle=_ENABLED.flip(r)),
        order=_by_time, actions=[("Add alarm", "add", lambda g: g.open("form")),
                                 ("Timers", "timers", lambda g: g.open("timers"))], toggle=_ENABLED,
        heading=lambda r: r["time"],
        lines=lambda r: [("Label", r["label"], "label"), ("Repeats", _days_text(r["days"]), "days")],
        fields=[("time", "Time (HH:MM)"), ("label", "Label"), ("days", "Days, e.g. mon, tue")],
        arguments=_form_arguments, create="clock.set_alarm", update="clock.update_alarm",
        delete="clock.delete_alarm"),
    "timers": _timers,
    "timer_form": _timer_form,
}
