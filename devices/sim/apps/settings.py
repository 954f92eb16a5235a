"""The settings app: wifi, bluetooth, brightness and the other device switches; its tools and screens."""

from __future__ import annotations

from typing import Any

from devices.kit.apps import APP_LABELS, check_value
from devices.kit.validators import any_value, string
from devices.sim.apps.ui import form_screen, list_screen
from devices.sim.state import SETTINGS_SPEC, SimState
from devices.sim.tools import tool

__all__ = ["KEYS", "LABEL", "ROOT", "SCREENS", "check_value"]

KEYS = list(SETTINGS_SPEC)
_KEY = string("Setting name.", enum=KEYS)


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


# ---- screens -------------------------------------------------------------------------------

LABEL = APP_LABELS["settings"]
ROOT = "list"
_TITLES = {"wifi": "Wi-Fi", "bluetooth": "Bluetooth", "airplane_mode": "Airplane mode",
           "do_not_disturb": "Do not disturb", "dark_mode": "Dark theme", "brightness": "Brightness",
           "volume_ring": "Ring volume", "location": "Location", "battery_saver": "Battery saver"}


def _flip(g: Any, key: str) -> str:
    result = g.call("settings.toggle", {"key": key})
    return f"{_TITLES[key]} {'on' if result['value'] else 'off'}."


def _list(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    items = []
    for key, (_, kind, _, high) in SETTINGS_SPEC.items():
        value = state.setting(key)
        if kind == "bool":
            flip = (lambda g, k=key: _flip(g, k))
            items.append((_TITLES[key], "On" if value else "Off", flip, None, bool(value), flip))
        else:
            items.append((_TITLES[key], f"{value} of {high}", lambda g, k=key: g.open("setting", key=k),
                          None, None, None))
    list_screen(b, frame, "Settings", items)


def _setting(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    key = frame["params"]["key"]

    def save(g: Any, values: dict[str, str]) -> str:
        g.call("settings.set", {"key": key, "value": values["value"].strip()})
        g.back()
        return f"{_TITLES[key]} set to {state.setting(key)}."

    _, _, low, high = SETTINGS_SPEC[key]
    form_screen(b, frame, _TITLES[key], [("value", f"{low}-{high}")], save,
                initial={"value": state.setting(key)})


SCREENS = {"list": _list, "setting": _setting}
