"""Tool calls on a real device: the mapping table tool name → adb commands, and their results.

Most tools go to the companion app's provider as `content call --method <verb> --arg <json>`
(the app runs the tool and returns the result as JSON). The tools Android itself can do are
mapped to native commands instead: `settings get/put` and `svc` for settings, `am start`
intents for alarms and timers, `content query/delete` for reads and deletes by id.
Arguments are checked against the same JSON Schemas as on the sim phone before anything runs.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from devices.adb.android_settings import ANDROID_SETTINGS
from devices.adb.client import AdbCall, CallTimedOut, CommandFailed
from devices.adb.provider import (
    parse_call_output,
    parse_query_output,
    table_uri,
    where_id,
)
from devices.kit.apps import SETTINGS_SPEC, check_value
from devices.kit.errors import NotFound, ToolFailure
from devices.kit.specs import CheckedTool, ToolSpec, tool_specs
from devices.protocol import DeviceError, DeviceLost
from schemas.observations import ToolError, ToolResult

__all__ = ["TOOL_COMMANDS", "AdbTools", "alarm_intent", "catalogue", "error_result", "timer_intent"]

logger = logging.getLogger(__name__)

Handler = Callable[[AdbCall, dict[str, Any]], Any]

#: Android's Calendar.DAY_OF_WEEK numbers, used by the SET_ALARM intent's DAYS extra.
CALENDAR_DAYS = {"sun": 1, "mon": 2, "tue": 3, "wed": 4, "thu": 5, "fri": 6, "sat": 7}

EXTRA = "android.intent.extra.alarm."


def catalogue() -> dict[str, CheckedTool]:
    """Every tool's spec and argument check (devices.kit.specs: the same specs the sim phone
    serves)."""
    return tool_specs()


# -- shell helpers ---------------------------------------------------------------------------

def _run(adb: AdbCall, command: list[str], *, idempotent: bool) -> str:
    out = adb.shell(command, idempotent=idempotent)
    text = out.text + out.error_text
    if out.exit_code != 0 or text.lstrip().startswith("Error"):
        raise ToolFailure(f"'{' '.join(command[:3])}' failed on the device: "
                          f"{text.strip()[:200] or f'exit code {out.exit_code}'}")
    return out.text


def _query(adb: AdbCall, app: str, table: str, row_id: str | None = None) -> list[dict[str, Any]]:
    command = ["content", "query", "--uri", table_uri(app, table)]
    if row_id is not None:
        command += ["--where", where_id(row_id)]
    return parse_query_output(_run(adb, command, idempotent=True), app, table)


def _require(adb: AdbCall, app: str, table: str, row_id: str, what: str) -> dict[str, Any]:
    rows = _query(adb, app, table, row_id)
    if not rows:
        raise NotFound(f"There is no {what} with id '{row_id}'.")
    return rows[0]


# -- native handlers -------------------------------------------------------------------------

def _setting_value(adb: AdbCall, key: str) -> Any:
    setting = ANDROID_SETTINGS[key]
    return setting.from_android(_run(adb, setting.read_command(), idempotent=True))


def _settings_get(adb: AdbCall, args: dict[str, Any]) -> Any:
    return {"key": args["key"], "value": _setting_value(adb, args["key"])}


def _settings_list(adb: AdbCall, args: dict[str, Any]) -> Any:
    return {key: _setting_value(adb, key) for key in SETTINGS_SPEC}


def _settings_set(adb: AdbCall, args: dict[str, Any]) -> Any:
    key = args["key"]
    value = check_value(key, args["value"])
    previous = _setting_value(adb, key)
    for command in ANDROID_SETTINGS[key].write_commands(value):
        _run(adb, command, idempotent=True)
    return {"key": key, "value": value, "previous": previous}


def _settings_toggle(adb: AdbCall, args: dict[str, Any]) -> Any:
    key = args["key"]
    previous = _setting_value(adb, key)
    for command in ANDROID_SETTINGS[key].write_commands(not previous):
        _run(adb, command, idempotent=True)
    return {"key": key, "value": not previous, "previous": previous}


def alarm_intent(time: str, label: str | None, days: list[str] | None) -> list[str]:
    """`am start` for AlarmClock.ACTION_SET_ALARM without UI."""
    hour, minute = (int(part) for part in time.split(":"))
    command = ["am", "start", "-a", "android.intent.action.SET_ALARM",
               "--ei", EXTRA + "HOUR", str(hour), "--ei", EXTRA + "MINUTES", str(minute),
               "--ez", EXTRA + "SKIP_UI", "true"]
    if label:
        command += ["--es", EXTRA + "MESSAGE", label]
    if days:
        command += ["--eia", EXTRA + "DAYS", ",".join(str(CALENDAR_DAYS[d]) for d in days)]
    return command


def timer_intent(seconds: int, label: str | None) -> list[str]:
    """`am start` for AlarmClock.ACTION_SET_TIMER without UI."""
    command = ["am", "start", "-a", "android.intent.action.SET_TIMER",
               "--ei", EXTRA + "LENGTH", str(seconds), "--ez", EXTRA + "SKIP_UI", "true"]
    if label:
        command += ["--es", EXTRA + "MESSAGE", label]
    return command


def _newest(rows: list[dict[str, Any]], what: str) -> dict[str, Any]:
    if not rows:
        raise ToolFailure(f"the device accepted the {what} intent but no {what} appeared")
    return rows[-1]


def _set_alarm(adb: AdbCall, args: dict[str, Any]) -> Any:
    _run(adb, alarm_intent(args["time"], args.get("label"), args.get("days")), idempotent=False)
    return _newest([r for r in _query(adb, "clock", "alarms") if r.get("time") == args["time"]],
                   "alarm")


def _start_timer(adb: AdbCall, args: dict[str, Any]) -> Any:
    _run(adb, timer_intent(args["seconds"], args.get("label")), idempotent=False)
    return _newest(_query(adb, "clock", "timers"), "timer")


def _list_alarms(adb: AdbCall, args: dict[str, Any]) -> Any:
    return sorted(_query(adb, "clock", "alarms"), key=lambda r: (r.get("time", ""), r["id"]))


def _getter(app: str, table: str, what: str) -> Handler:
    def get(adb: AdbCall, args: dict[str, Any]) -> Any:
        return _require(adb, app, table, args["id"], what)
    return get


def _deleter(app: str, table: str, what: str) -> Handler:
    def delete(adb: AdbCall, args: dict[str, Any]) -> Any:
        row = _require(adb, app, table, args["id"], what)
        _run(adb, ["content", "delete", "--uri", table_uri(app, table),
                   "--where", where_id(args["id"])], idempotent=True)
        return row
    return delete


#: Tools with a native Android mapping; every other tool goes through `content call`.
TOOL_COMMANDS: dict[str, Handler] = {
    "settings.get": _settings_get,
    "settings.list": _settings_list,
    "settings.set": _settings_set,
    "settings.toggle": _settings_toggle,
    "clock.set_alarm": _set_alarm,
    "clock.start_timer": _start_timer,
    "clock.list_alarms": _list_alarms,
    "clock.delete_alarm": _deleter("clock", "alarms", "alarm"),
    "contacts.get": _getter("contacts", "contacts", "contact"),
    "contacts.delete": _deleter("contacts", "contacts", "contact"),
    "notes.delete": _deleter("notes", "notes", "note"),
}


def _content_call(adb: AdbCall, name: str, args: dict[str, Any]) -> ToolResult:
    app, verb = name.split(".", 1)
    arg = json.dumps(args, separators=(",", ":"), ensure_ascii=False)
    text = _run(adb, ["content", "call", "--uri", table_uri(app), "--method", verb, "--arg", arg],
                idempotent=False)
    try:
        return ToolResult.model_validate(parse_call_output(text) | {"name": name})
    except ValueError as error:
        raise ToolFailure(f"the {app} app answered {name} with something unreadable ({error})"
                          ) from None


class AdbTools:
    """Runs tool calls on one device: checks arguments, then the native mapping or content call.
    A subclass narrows what runs (`specs`, `refusal`) and how (`run`); the checks and the
    mapping of failures to typed tool errors stay here."""

    def __init__(self, adb: AdbCall) -> None:
        self.adb = adb
        self.registry = catalogue()

    @property
    def specs(self) -> dict[str, ToolSpec]:
        return {name: tool.spec for name, tool in self.registry.items()}

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """One tool call → a ToolResult; only a lost device raises."""
        tool = self.registry.get(name)
        if tool is None:
            return _error(name, "unknown_tool", f"There is no tool named '{name}'.")
        refused = self.refusal(name)
        if refused is not None:
            return refused
        try:
            return self.run(name, tool.check(dict(arguments)))
        except ToolFailure as failure:  # bad arguments, not found, …: each its own code
            return _error(name, failure.code, failure.message)
        except DeviceLost:
            raise
        except DeviceError as error:  # exit code, timeout or refusal: each its own code
            return error_result(name, error)

    def refusal(self, name: str) -> ToolResult | None:
        """The error for a known tool this device cannot run (None: it can)."""
        return None

    def run(self, name: str, args: dict[str, Any]) -> ToolResult:
        """Runs a checked call: the native mapping where there is one, else a content call."""
        handler = TOOL_COMMANDS.get(name)
        if handler is None:
            return _content_call(self.adb, name, args)
        return ToolResult(name=name, ok=True, value=handler(self.adb, args))


def error_result(name: str, error: DeviceError) -> ToolResult:
    """A device-side failure as a typed tool error: exit codes, timeouts and refusals apart."""
    if isinstance(error, CommandFailed):
        denied = "SecurityException" in error.output or "Permission Denial" in error.output
        return _error(name, "permission_denied" if denied else "command_failed", str(error))
    if isinstance(error, CallTimedOut):
        return _error(name, "timeout", str(error))
    return _error(name, "transient", str(error))


def _error(name: str, code: str, message: str) -> ToolResult:
    return ToolResult(name=name, ok=False, error=ToolError(code=code, message=message))  # type: ignore[arg-type]
