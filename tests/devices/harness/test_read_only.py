"""Read-only means read-only: every tool the catalogue marks `writes=False` is run on populated
phones — with the arguments the oracles use and with arguments made from the phone's own rows —
and the phone's state must not change. A tool that writes must be labelled a writer."""

from __future__ import annotations

import json
from typing import Any

from devices.harness.catalogue import is_write_tool
from devices.harness.episode import play
from devices.sim import SimPhone
from devices.sim.tools import REGISTRY
from devices.suite.instances import generate_split
from devices.suite.policies import OraclePolicy


def _state(phone: SimPhone) -> str:
    return json.dumps(phone.device_state(), sort_keys=True, default=str)


def _row_ids(phone: SimPhone, app: str) -> list[str]:
    tables = phone.device_state()["tables"].get(app, {})
    return [row_id for rows in tables.values() for row_id in list(rows)[:4]]


def _arguments(spec: Any, phone: SimPhone) -> list[dict[str, Any]]:
    """Argument sets for a tool: each required id from the app's rows, other values by type."""
    props = spec.parameters.get("properties", {})
    required = spec.parameters.get("required", [])
    ids = _row_ids(phone, spec.app) or ["none"]
    sets = []
    for row_id in ids:
        args: dict[str, Any] = {}
        for key in required:
            schema = props.get(key, {})
            if "enum" in schema:
                args[key] = schema["enum"][0]
            elif schema.get("type") == "integer":
                args[key] = 1
            elif schema.get("type") == "number":
                args[key] = 1.0
            elif schema.get("type") == "boolean":
                args[key] = True
            elif schema.get("type") == "array":
                args[key] = []
            else:
                args[key] = row_id if key.endswith("id") else "a"
        sets.append(args)
    return sets


def _readers() -> list[str]:
    return sorted(name for name in REGISTRY if not is_write_tool(name))


def test_every_read_only_tool_leaves_a_populated_phone_unchanged() -> None:
    phone = SimPhone()
    changed: dict[str, str] = {}
    answered: set[str] = set()
    seen_apps: set[str] = set()
    for task in generate_split("train", 1, 0):
        if set(task.apps) <= seen_apps:
            continue  # one populated world per new app is enough
        seen_apps |= set(task.apps)
        phone.reset(task)
        for name in (n for n in _readers() if REGISTRY[n].spec.app in task.apps):
            for args in _arguments(REGISTRY[name].spec, phone):
                before = _state(phone)
                if phone.call_tool(name, args).ok:
                    answered.add(name)
                if _state(phone) != before:
                    changed[name] = f"{args} on {task.task_id}"
    assert not changed, f"tools marked read-only changed the phone: {changed}"
    # Most readers must really have run (not only refused made-up arguments).
    assert len(answered) >= 0.7 * len(_readers()), sorted(set(_readers()) - answered)


def test_the_oracles_read_only_calls_change_nothing() -> None:
    phone = SimPhone()
    original = phone.call_tool
    changed: list[str] = []

    def watched(name: str, arguments: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        before = _state(phone)
        result = original(name, arguments, **kwargs)
        if not is_write_tool(name) and _state(phone) != before:
            changed.append(f"{name}({arguments})")
        return result

    phone.call_tool = watched  # type: ignore[method-assign]
    for task in generate_split("train", 1, 0):
        oracle = OraclePolicy()
        play(phone, task, oracle)
    assert not changed


def test_the_two_tools_that_mark_things_read_are_writers() -> None:
    # The negative case the issue found: both were labelled read-only and flipped `read`.
    assert is_write_tool("messages.mark_read") and is_write_tool("email.read")
    assert not is_write_tool("email.list") and not is_write_tool("messages.get")
