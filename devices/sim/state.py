"""SimState: the phone's whole state (app tables, settings, memory, log, clock, UI) with cheap snapshots.

Tables are dicts of immutable rows (a row is never changed in place; an update
stores a new dict). A snapshot shares every table with the live state and the
live state copies a table's id→row dict only on its first write after the
snapshot (copy-on-write per table), so snapshot, restore and fork cost a few
dict copies, never a deep copy of the world. The apps, tables and settings, the log entry and
the checkers' read API come from the shared kit (devices.kit) and stay importable from here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from devices.kit.apps import APPS, SETTINGS_SPEC, TABLES
from devices.kit.final_state import StateReads
from devices.kit.log import LogEntry, LogKind, copy_json
from devices.protocol import DeviceError

__all__ = [
    "APPS",
    "SETTINGS_SPEC",
    "TABLES",
    "InitialStateError",
    "LogEntry",
    "LogKind",
    "SimSnapshot",
    "SimState",
    "StateReads",
    "copy_json",
]

logger = logging.getLogger(__name__)


class InitialStateError(DeviceError, ValueError):
    """A task's initial_state names an unknown app, table or setting, or holds a bad row."""


@dataclass(frozen=True, slots=True)
class SimSnapshot:
    """An immutable handle on a SimState; its tables are shared, never written."""

    tables: dict[str, dict[str, dict[str, Any]]]
    counters: dict[str, int]
    settings: dict[str, Any]
    memory: dict[str, Any]
    user_answers: dict[str, str]
    log: tuple[LogEntry, ...]
    faults: tuple[tuple[int, str], ...]
    answer: str | None
    goal_status: str | None
    clock_ms: int
    step: int
    done: bool
    max_steps: int
    ui: dict[str, Any] = field(default_factory=dict)


class SimState(StateReads):
    """The live state of one simulated phone. Tools write through the methods below."""

    __slots__ = (
        "_counters",
        "_faults",
        "_log",
        "_memory",
        "_owned",
        "_settings",
        "_tables",
        "answer",
        "clock_ms",
        "done",
        "goal_status",
        "max_steps",
        "step",
        "ui",
        "ui_rev",
        "user_answers",
        "versions",
    )

    def __init__(self, clock_ms: int = 0, max_steps: int = 30) -> None:
        self._tables: dict[str, dict[str, dict[str, Any]]] = {
            f"{app}.{table}": {} for app, tables in TABLES.items() for table in tables
        }
        self._owned: set[str] = set(self._tables)
        self._counters: dict[str, int] = {key: 0 for key in self._tables}
        self._settings: dict[str, Any] = {k: spec[0] for k, spec in SETTINGS_SPEC.items()}
        self._memory: dict[str, Any] = {}
        self.user_answers: dict[str, str] = {}
        self._log: list[LogEntry] = []
        self._faults: list[tuple[int, str]] = []
        self.answer: str | None = None
        self.goal_status: str | None = None
        self.clock_ms = clock_ms
        self.step = 0
        self.done = False
        self.max_steps = max_steps
        self.ui: dict[str, Any] = {"stack": [], "dialog": None}
        self.ui_rev = 0
        # app → write count; screens cache on it (not part of a snapshot).
        self.versions: dict[str, int] = dict.fromkeys(APPS, 0)

    # ---- reading (what checkers use: rows, row, settings, memory, log from StateReads) ------
    @property
    def faults(self) -> list[tuple[int, str]]:
        """(step, fault kind) for every fault injected so far."""
        return list(self._faults)

    # ---- internal reads (no copies: callers must not mutate) ---------------------------
    def _table(self, app: str, table: str) -> dict[str, dict[str, Any]]:
        try:
            return self._tables[f"{app}.{table}"]
        except KeyError:
            raise KeyError(f"there is no table '{app}.{table}'") from None

    def table(self, app: str, table: str) -> dict[str, dict[str, Any]]:
        """The live id→row map; read-only for callers (rows are immutable)."""
        return self._tables[f"{app}.{table}"]

    def get(self, app: str, table: str, row_id: str) -> dict[str, Any] | None:
        return self._tables[f"{app}.{table}"].get(row_id)

    def setting(self, key: str) -> Any:
        return self._settings[key]

    def memory_get(self, key: str) -> Any:
        return self._memory.get(key)

    def memory_items(self) -> list[tuple[str, Any]]:
        return list(self._memory.items())

    # ---- writing -----------------------------------------------------------------------
    def _writable(self, key: str) -> dict[str, dict[str, Any]]:
        if key not in self._owned:
            self._tables[key] = dict(self._tables[key])
            self._owned.add(key)
        return self._tables[key]

    def new_id(self, app: str, table: str) -> str:
        key = f"{app}.{table}"
        prefix = TABLES[app][table]
        rows = self._tables[key]
        n = self._counters[key] + 1
        while f"{prefix}{n}" in rows:
            n += 1
        self._counters[key] = n
        return f"{prefix}{n}"

    def put(self, app: str, table: str, row: dict[str, Any]) -> dict[str, Any]:
        """Inserts or replaces a row (by its `id`); the row must not be mutated afterwards."""
        self._writable(f"{app}.{table}")[row["id"]] = row
        self.versions[app] += 1
        return row

    def update(self, app: str, table: str, row_id: str, changes: dict[str, Any]) -> dict[str, Any]:
        """Stores a new row = old row with `changes`; returns it."""
        key = f"{app}.{table}"
        new = {**self._tables[key][row_id], **changes}
        self._writable(key)[row_id] = new
        self.versions[app] += 1
        return new

    def delete(self, app: str, table: str, row_id: str) -> dict[str, Any]:
        row = self._writable(f"{app}.{table}").pop(row_id)
        self.versions[app] += 1
        return row

    def set_setting(self, key: str, value: Any) -> None:
        self._settings[key] = value
        self.versions["settings"] += 1

    def memory_set(self, key: str, value: Any) -> None:
        self._memory[key] = copy_json(value)

    def append_log(self, entry: LogEntry) -> int:
        self._log.append(entry)
        return len(self._log) - 1

    def replace_log(self, index: int, entry: LogEntry) -> None:
        self._log[index] = entry

    def record_fault(self, kind: str) -> None:
        self._faults.append((self.step, kind))

    def touch_ui(self) -> None:
        """Marks the UI as changed so the cached screen is re-rendered."""
        self.ui_rev += 1

    # ---- loading -------------------------------------------------------------------------
    def load(self, world: dict[str, Any], initial_state: dict[str, Any] | None = None) -> None:
        """Loads the default world, then overlays a task's initial_state.

        Rows whose id already exists replace that row; others are appended (an id is
        assigned when a row has none). Raises InitialStateError naming the bad part.
        """
        for app, tables in world.items():
            for table, rows in tables.items():
                for row in rows:
                    self.put(app, table, copy_json(row))
        overlay = initial_state or {}
        for app, tables in overlay.items():
            if app == "settings":
                self._load_settings(tables)
            elif app == "memory":
                if not isinstance(tables, dict):
                    raise InitialStateError("initial_state['memory'] must be an object of key → value.")
                for key, value in tables.items():
                    self.memory_set(str(key), value)
            elif app == "user":
                answers = (tables or {}).get("answers", {}) if isinstance(tables, dict) else None
                if not isinstance(answers, dict):
                    raise InitialStateError("initial_state['user']['answers'] must be an object of keyword → reply.")
                self.user_answers = {str(k): str(v) for k, v in answers.items()}
            elif app in TABLES:
                self._load_tables(app, tables)
            else:
                raise InitialStateError(
                    f"initial_state names unknown app '{app}'; use one of {', '.join(APPS)}, "
                    "settings, memory or user.")
        self._counters = {key: 0 for key in self._tables}

    def _load_tables(self, app: str, tables: Any) -> None:
        if not isinstance(tables, dict):
            raise InitialStateError(f"initial_state['{app}'] must map table names to lists of rows.")
        for table, rows in tables.items():
            if table not in TABLES[app]:
                raise InitialStateError(
                    f"initial_state names unknown table '{app}.{table}'; "
                    f"{app} has {', '.join(TABLES[app]) or 'no tables'}.")
            if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                raise InitialStateError(f"initial_state['{app}']['{table}'] must be a list of objects.")
            for row in rows:
                new = copy_json(row)
                if "id" not in new:
                    new["id"] = self.new_id(app, table)
                new["id"] = str(new["id"])
                self.put(app, table, new)

    def _load_settings(self, values: Any) -> None:
        if not isinstance(values, dict):
            raise InitialStateError("initial_state['settings'] must be an object of key → value.")
        for key, value in values.items():
            if key not in SETTINGS_SPEC:
                raise InitialStateError(
                    f"initial_state sets unknown setting '{key}'; use one of {', '.join(SETTINGS_SPEC)}.")
            self.set_setting(key, value)

    # ---- snapshots -----------------------------------------------------------------------
    def freeze(self) -> SimSnapshot:
        """An immutable snapshot; afterwards both share every table until one is written."""
        self._owned.clear()
        return SimSnapshot(
            tables=dict(self._tables), counters=dict(self._counters),
            settings=dict(self._settings), memory=copy_json(self._memory),
            user_answers=dict(self.user_answers), log=tuple(self._log),
            faults=tuple(self._faults), answer=self.answer, goal_status=self.goal_status,
            clock_ms=self.clock_ms, step=self.step, done=self.done, max_steps=self.max_steps,
            ui=copy_json(self.ui),
        )

    @classmethod
    def thaw(cls, snap: SimSnapshot) -> SimState:
        """A live state equal to `snap`, sharing its tables copy-on-write."""
        state = cls.__new__(cls)
        state._tables = dict(snap.tables)
        state._owned = set()
        state._counters = dict(snap.counters)
        state._settings = dict(snap.settings)
        state._memory = copy_json(snap.memory)
        state.user_answers = dict(snap.user_answers)
        state._log = list(snap.log)
        state._faults = list(snap.faults)
        state.answer = snap.answer
        state.goal_status = snap.goal_status
        state.clock_ms = snap.clock_ms
        state.step = snap.step
        state.done = snap.done
        state.max_steps = snap.max_steps
        state.ui = copy_json(snap.ui)
        state.ui_rev = 0
        state.versions = dict.fromkeys(APPS, 0)
        return state

    def to_final_json(self, copy: bool = True) -> dict[str, Any]:
        """The final-state JSON checkers score (devices.suite.state_view): tables, settings,
        memory, log, answer, goal status and clock, all plain JSON. `copy=False` shares the
        rows and memory with this state: for a state that is thrown away after (a scorer's
        rebuilt start state), never for a live phone's."""
        share = (lambda value: value) if not copy else copy_json
        return {**self.device_json(copy), "memory": share(self._memory),
                "log": [e.to_dict() for e in self._log], "answer": self.answer,
                "goal_status": self.goal_status}

    def device_json(self, copy: bool = True) -> dict[str, Any]:
        """The phone's part of `to_final_json`: every app table by row id, settings, the clock.
        `copy=False` shares the rows with this state: for a reader done with them before the
        state changes again (a scorer), never for a final state that is kept."""
        tables: dict[str, dict[str, dict[str, Any]]] = {app: {} for app in TABLES}
        for key, rows in self._tables.items():
            app, table = key.split(".", 1)
            tables[app][table] = {row_id: copy_json(r) for row_id, r in rows.items()} if copy else dict(rows)
        return {"tables": tables, "settings": dict(self._settings), "clock_ms": self.clock_ms}

    def fingerprint(self) -> dict[str, Any]:
        """Everything observable as plain JSON (for determinism checks and debugging)."""
        return {
            "tables": {key: [copy_json(r) for r in rows.values()] for key, rows in self._tables.items()},
            "settings": dict(self._settings), "memory": copy_json(self._memory),
            "log": [e.to_dict() for e in self._log], "faults": [list(f) for f in self._faults],
            "answer": self.answer, "goal_status": self.goal_status, "clock_ms": self.clock_ms,
            "step": self.step, "done": self.done, "ui": copy_json(self.ui),
        }
