"""FinalStateView: the read API checkers use (rows, row, settings, memory, log, answer), over the
final-state JSON a harness reports (`Harness.final_state()`, contract §3)."""

from __future__ import annotations

import logging
from typing import Any

from devices.sim.state import LogEntry, copy_json

__all__ = ["FinalStateView"]

logger = logging.getLogger(__name__)


class FinalStateView:
    """Read-only access to one episode's outcome, the same surface checkers read on SimState."""

    __slots__ = ("_data", "_log")

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data
        self._log = [LogEntry(int(e["step"]), e["kind"], e["name"], dict(e.get("arguments") or {}),
                              bool(e["ok"]), e.get("agent", "main"), e.get("parent"))
                     for e in data.get("log", [])]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FinalStateView:
        return cls(data)

    def rows(self, app: str, table: str) -> list[dict[str, Any]]:
        try:
            found = self._data["tables"][app][table]
        except KeyError:
            raise KeyError(f"there is no table '{app}.{table}'") from None
        return [copy_json(r) for r in found.values()]

    def row(self, app: str, table: str, row_id: str) -> dict[str, Any] | None:
        found = self._data.get("tables", {}).get(app, {}).get(table, {}).get(row_id)
        return None if found is None else copy_json(found)

    @property
    def settings(self) -> dict[str, Any]:
        return dict(self._data.get("settings", {}))

    @property
    def memory(self) -> dict[str, Any]:
        return copy_json(self._data.get("memory", {}))

    @property
    def log(self) -> list[LogEntry]:
        return list(self._log)

    @property
    def answer(self) -> str | None:
        return self._data.get("answer")

    @property
    def goal_status(self) -> str | None:
        return self._data.get("goal_status")

    @property
    def clock_ms(self) -> int:
        return int(self._data.get("clock_ms", 0))
