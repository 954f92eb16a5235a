"""The read API checkers use (`StateReads`), and `StateView`: that API over the final-state JSON
any harness and device produce.

The JSON (contract §3) is
    {"tables": {app: {table: {row_id: row}}}, "settings": {...}, "memory": {...},
     "log": [{"step", "kind", "name", "arguments", "ok", "agent", "parent"}, ...],
     "answer": str | None, "goal_status": str | None, "clock_ms": int}
so the verifier can score an episode from a stored blob, without the device that ran it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from devices.kit.log import LogEntry, copy_json

__all__ = ["FinalStateError", "StateReads", "StateView"]


class StateReads:
    """The checker read API (rows, row, settings, memory, log), returning copies, over a class's
    `_table(app, table)` id→row map and its `_settings`, `_memory` and `_log`; SimState and the
    verifier's StateView share it."""

    __slots__ = ()
    _settings: dict[str, Any]
    _memory: dict[str, Any]
    _log: list[LogEntry]

    def _table(self, app: str, table: str) -> dict[str, dict[str, Any]]:
        raise NotImplementedError

    def rows(self, app: str, table: str) -> list[dict[str, Any]]:
        """Copies of every row of `app.table`, in insertion order."""
        return [copy_json(r) for r in self._table(app, table).values()]

    def row(self, app: str, table: str, row_id: str) -> dict[str, Any] | None:
        """A copy of one row by id, or None."""
        found = self._table(app, table).get(row_id)
        return None if found is None else copy_json(found)

    @property
    def settings(self) -> dict[str, Any]:
        return dict(self._settings)

    @property
    def memory(self) -> dict[str, Any]:
        return copy_json(self._memory)

    @property
    def log(self) -> list[LogEntry]:
        return list(self._log)


class FinalStateError(ValueError):
    """The final-state JSON is not in the contract's shape."""


class StateView(StateReads):
    """A read-only view with the same read API as SimState (rows, row, settings, memory, log, answer)."""

    __slots__ = ("_log", "_memory", "_settings", "_tables", "answer", "clock_ms", "goal_status")

    def __init__(self, tables: dict[str, dict[str, dict[str, dict[str, Any]]]],
                 settings: dict[str, Any], memory: dict[str, Any], log: list[LogEntry],
                 answer: str | None, goal_status: str | None, clock_ms: int) -> None:
        self._tables = tables
        self._settings = settings
        self._memory = memory
        self._log = log
        self.answer = answer
        self.goal_status = goal_status
        self.clock_ms = clock_ms

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> StateView:
        """Builds a view from the contract's final-state dict; FinalStateError names a bad part."""
        if not isinstance(data, Mapping):
            raise FinalStateError("the final state must be a JSON object.")
        tables = data.get("tables", {})
        if not isinstance(tables, Mapping) or not all(
                isinstance(ts, Mapping) and all(isinstance(rs, Mapping) for rs in ts.values())
                for ts in tables.values()):
            raise FinalStateError("final state 'tables' must map app → table → row id → row.")
        for key in ("settings", "memory"):
            if not isinstance(data.get(key, {}), Mapping):
                raise FinalStateError(f"final state '{key}' must be an object.")
        raw_log = data.get("log", [])
        if not isinstance(raw_log, list):
            raise FinalStateError("final state 'log' must be a list of entries.")
        try:
            log = [LogEntry(int(e["step"]), e["kind"], str(e["name"]), dict(e.get("arguments") or {}),
                            bool(e["ok"]), str(e.get("agent") or "main"), e.get("parent"))
                   for e in raw_log]
        except (KeyError, TypeError, ValueError) as exc:
            raise FinalStateError(f"a final-state log entry lacks step, kind, name or ok ({exc}).") from None
        answer = data.get("answer")
        return cls({app: {t: dict(rs) for t, rs in ts.items()} for app, ts in tables.items()},
                   dict(data.get("settings", {})), dict(data.get("memory", {})), log,
                   None if answer is None else str(answer), data.get("goal_status"),
                   int(data.get("clock_ms", 0)))

    def to_json(self) -> dict[str, Any]:
        return {"tables": copy_json(self._tables), "settings": dict(self._settings),
                "memory": copy_json(self._memory), "log": [e.to_dict() for e in self._log],
                "answer": self.answer, "goal_status": self.goal_status, "clock_ms": self.clock_ms}

    # ---- the checker read API (rows, row, settings, memory, log from StateReads) --------
    def _table(self, app: str, table: str) -> dict[str, dict[str, Any]]:
        return self.table(app, table)

    def table(self, app: str, table: str) -> dict[str, dict[str, Any]]:
        """The id→row map of one table (empty when the app or table is absent); do not mutate."""
        return self._tables.get(app, {}).get(table, {})

    def tables(self) -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
        return self._tables
