"""The clock app: alarms and timers; its tools and screens."""

from __future__ import annotations

from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import array, boolean, integer, string
from devices.sim.apps.common import TIME, now_iso, out, outs, pick_changes
from devices.sim.apps.records import change_tool, delete_button, delete_tool
from devices.sim.apps.ui import detail_header, form_screen, list_screen, missing, split_list
from devices.sim.state import SimState
from devices.sim.tools import BadArguments, tool

__all__ = ["DAYS", "LABEL", "ROOT", "SCREENS", "add_alarm"]

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


change_tool("clock.update_alarm", "Change an alarm's time, label or days.", "The updated alarm record.",
            "alarms", "alarm", "Alarm id, e.g. 'al1'.", lambda args: pick_changes(args, ("time", "label", "days")),
            optional={"time": string("New time 'HH:MM'.", pattern=TIME), "label": string("New label."),
                      "days": _DAYS})


change_tool("clock.toggle_alarm", "Turn an alarm on or off.", "The updated alarm record.", "alarms", "alarm",
            "Alarm id.", lambda args: {"enabled": args["enabled"]}, {"enabled": boolean("True to turn on.")})


delete_tool("clock.delete_alarm", "Delete an alarm.", "The deleted alarm record.", "alarms", "alarm", "Alarm id.")


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


delete_tool("clock.cancel_timer", "Cancel a running timer.", "The cancelled timer record.",
            "timers", "timer", "Timer id, e.g. 'tm1'.")


# ---- screens -------------------------------------------------------------------------------

LABEL = APP_LABELS["clock"]
ROOT = "list"


def _toggle(g: Any, row_id: str, enabled: bool) -> str:
    g.call("clock.toggle_alarm", {"id": row_id, "enabled": enabled})
    return "Alarm on." if enabled else "Alarm off."


def _days_text(days: list[str]) -> str:
    return ", ".join(days) if days else "once"


def _list(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    items = [(r["time"], f"{r['label'] or 'Alarm'} · {_days_text(r['days'])}",
              lambda g, i=r["id"]: g.open("detail", id=i), None, r["enabled"],
              lambda g, i=r["id"], e=r["enabled"]: _toggle(g, i, not e))
             for r in _alarms(state)]
    list_screen(b, frame, "Alarms", items,
                actions=[("Add alarm", "add", lambda g: g.open("form")),
                         ("Timers", "timers", lambda g: g.open("timers"))])


def _detail(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    row = state.get("clock", "alarms", frame["params"]["id"])
    if row is None:
        return missing(b, "alarm")
    detail_header(b, row["time"], [("Label", row["label"], "label"), ("Repeats", _days_text(row["days"]), "days")])
    b.switch("Enabled", "enabled", row["enabled"], lambda g, i=row["id"], e=row["enabled"]: _toggle(g, i, not e))
    b.button("Edit", "edit", lambda g, i=row["id"]: g.open("form", id=i))
    delete_button(b, "clock.delete_alarm", row["id"], "Alarm deleted.")


def _form(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    row_id = frame["params"].get("id")
    row = state.get("clock", "alarms", row_id) if row_id else None

    def save(g: Any, values: dict[str, str]) -> str:
        args = {"time": values["time"].strip(), "label": values["label"].strip(),
                "days": [d.lower()[:3] for d in split_list(values["days"])]}
        if row is None:
            g.call("clock.set_alarm", args)
        else:
            g.call("clock.update_alarm", {"id": row["id"], **args})
        g.back()
        return "Alarm saved."

    form_screen(b, frame, "Edit alarm" if row else "New alarm",
                [("time", "Time (HH:MM)"), ("label", "Label"), ("days", "Days, e.g. mon, tue")],
                save, initial=row)


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


SCREENS = {"list": _list, "detail": _detail, "form": _form, "timers": _timers, "timer_form": _timer_form}
