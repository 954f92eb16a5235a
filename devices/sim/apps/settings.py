"""The settings app: wifi, bluetooth, brightness and the other device switches; its tools and screens."""

from __future__ import annotations

from typing import Any

from devices.sim.state import SETTINGS_SPEC, SimState
from devices.sim.tools import BadArguments, any_value, string, tool

__all__ = ["KEYS", "check_value"]

KEYS = list(SETTINGS_SPEC)
_KEY = string("Setting name.", enum=KEYS)


def check_value(key: str, value: Any) -> Any:
    """The value converted to the setting's type, or BadArguments naming the expected range."""
    _, kind, low, high = SETTINGS_SPEC[key]
    if kind == "bool":
        if type(value) is bool:
            return value
        if isinstance(value, str) and value.lower() in ("on", "off", "true", "false"):
            return value.lower() in ("on", "true")
        raise BadArguments(f"Argument 'value' for '{key}' must be true or false.")
    if type(value) is bool or not isinstance(value, (int, float, str)):
        raise BadArguments(f"Argument 'value' for '{key}' must be a whole number from {low} to {high}.")
    try:
        number = int(value)
    except ValueError:
        raise BadArguments(f"Argument 'value' for '{key}' must be a whole number from {low} to {high}.") from None
    if not low <= number <= high or number != float(value):
        raise BadArguments(f"Argument 'value' for '{key}' must be a whole number from {low} to {high}.")
    return number


@tool("settings.get", "Read one setting.", "{'key', 'value'}.", {"key": _KEY})
def get(state: SimState, args: dict[str, Any]) -> Any:
    return {"key": args["key"], "value": state.setting(args["key"])}


@tool("settings.list", "Read every setting.", "An object of setting → value.")
def list_settings(state: SimState, args: dict[str, Any]) -> Any:
    return state.settings


@tool("settings.set", "Change a setting (on/off switches take true/false; brightness 0-100; volume_ring 0-7).",
      "{'key', 'value', 'previous'}.", {"key": _KEY, "value": any_value("The new value.")})
def set_setting(state: SimState, args: dict[str, Any]) -> Any:
    key = args["key"]
    value = check_value(key, args["value"])
    previous = state.setting(key)
    state.set_setting(key, value)
    return {"key": key, "value": value, "previous": previous}


@tool("settings.toggle", "Flip an on/off setting.", "{'key', 'value', 'previous'}.",
      {"key": string("An on/off setting name.",
                     enum=[k for k, spec in SETTINGS_SPEC.items() if spec[1] == "bool"])})
def toggle(state: SimState, args: dict[str, Any]) -> Any:
    key = args["key"]
    previous = state.setting(key)
    state.set_setting(key, not previous)
    return {"key": key, "value": not previous, "previous": previous}
