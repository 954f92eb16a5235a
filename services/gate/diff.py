"""State diffs for people: which rows, settings and memory entries an episode changed."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_DIFF_ROWS", "diff_states", "episode_diff", "initial_view", "sim_state_view"]

logger = logging.getLogger(__name__)

#: A diff longer than this is cut (and says so): a reviewer reads tens of changes, not thousands.
MAX_DIFF_ROWS = 200
_MISSING = object()


def _rows(rows: Any) -> dict[str, Any]:
    if isinstance(rows, list):
        return {str(row.get("id", i)) if isinstance(row, Mapping) else str(i): row
                for i, row in enumerate(rows)}
    return dict(rows)


def _tables(tables: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Tables as "app.table" → row id → row, from either shape a state comes in: a phone
    fingerprint ("app.table" → list of rows) or a final state (app → table → id → row)."""
    out: dict[str, dict[str, Any]] = {}
    for name, value in tables.items():
        if "." in name or not isinstance(value, Mapping):
            out[name] = _rows(value)
        else:
            for table, rows in value.items():
                out[f"{name}.{table}"] = _rows(rows)
    return out


def sim_state_view(state: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of a device state a checker judges (tables by row id, settings, memory, the
    answer and goal status), without the clock, log and UI."""
    return {"tables": _tables(state.get("tables", {})), "settings": state.get("settings", {}),
            "memory": state.get("memory", {}), "answer": state.get("answer"),
            "goal_status": state.get("goal_status")}


def initial_view(instance: Mapping[str, Any]) -> dict[str, Any]:
    """The state a task instance starts from (a fresh SimPhone reset to it), as a view."""
    from devices.protocol import TaskInstance
    from devices.sim.phone import SimPhone

    task = TaskInstance.model_validate(instance)
    phone = SimPhone("gate-diff")
    phone.reset(task)
    reader = getattr(phone, "device_state", None)
    state = reader() if reader is not None else phone.state.fingerprint()
    state.setdefault("memory", (task.initial_state or {}).get("memory", {}))
    return sim_state_view(state)


def episode_diff(instance: Mapping[str, Any], final_state: Mapping[str, Any]
                 ) -> list[dict[str, Any]]:
    """What an episode changed: its task's initial state against the final state it left."""
    return diff_states(initial_view(instance), sim_state_view(final_state))


def diff_states(before: Any, after: Any, path: str = "") -> list[dict[str, Any]]:
    """Changed leaves as {"path", "before", "after"} (None stands for absent; lists compare
    whole). At most MAX_DIFF_ROWS entries, the last saying how many more there were."""
    out: list[dict[str, Any]] = []
    _walk(before, after, path, out)
    if len(out) > MAX_DIFF_ROWS:
        extra = len(out) - MAX_DIFF_ROWS
        out = out[:MAX_DIFF_ROWS]
        out.append({"path": f"… {extra} more changes", "before": None, "after": None})
    return out


def _walk(before: Any, after: Any, path: str, out: list[dict[str, Any]]) -> None:
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        for key in sorted(set(before) | set(after), key=str):
            child = f"{path}.{key}" if path else str(key)
            b, a = before.get(key, _MISSING), after.get(key, _MISSING)
            if b is _MISSING or a is _MISSING:
                if not (b is _MISSING and a is _MISSING):
                    out.append({"path": child, "before": None if b is _MISSING else b,
                                "after": None if a is _MISSING else a})
            else:
                _walk(b, a, child, out)
        return
    if before != after:
        out.append({"path": path, "before": before, "after": after})
