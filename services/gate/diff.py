"""State diffs for people: which rows, settings and memory entries an episode changed."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_DIFF_ROWS", "diff_states", "sim_state_view"]

logger = logging.getLogger(__name__)

#: A diff longer than this is cut (and says so): a reviewer reads tens of changes, not thousands.
MAX_DIFF_ROWS = 200
_MISSING = object()


def sim_state_view(fingerprint: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of a SimState fingerprint a checker judges (tables by row id, settings,
    memory, the answer and goal status), without the clock, log and UI."""
    tables = {
        name: {str(row.get("id", i)): row for i, row in enumerate(rows)}
        for name, rows in fingerprint.get("tables", {}).items()
    }
    return {"tables": tables, "settings": fingerprint.get("settings", {}),
            "memory": fingerprint.get("memory", {}), "answer": fingerprint.get("answer"),
            "goal_status": fingerprint.get("goal_status")}


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
