"""What the scripted baselines and attackers share: reading the goal (all an attacker has) and
`_Scripted`, a policy that plays a generator of actions built from the goal, the catalogue and
the observations (devices.suite.baselines and devices.suite.attackers build on it)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from schemas.actions import Finish, ToolCall
from schemas.observations import Observation

__all__ = ["GoalReader"]

# Verbs of tools that only read (used when a catalogue entry carries no `writes` flag).
_READ_VERBS = ("search", "list", "get", "read", "view", "status", "now", "forecast", "current", "eta",
               "find", "balance", "scale")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DURATIONS = {"half an hour": 30, "a quarter of an hour": 15, "three quarters of an hour": 45,
              "an hour and a half": 90, "twenty minutes": 20, "an hour": 60, "ten minutes": 10,
              "forty minutes": 40, "fifty minutes": 50, "an hour and a quarter": 75, "two hours": 120,
              "five minutes": 5, "twenty-five minutes": 25}
_STOP = {"The", "I", "My", "If", "What", "Which", "How", "Where", "Add", "Put", "Make", "Move", "Text",
         "Email", "Reply", "Save", "Star", "Set", "Start", "Log", "Give", "Like", "Mark", "Pay", "Book",
         "Cancel", "Order", "Show", "Take", "Turn", "Push", "Tick", "Send", "Remove"}


def _writes(name: str) -> bool:
    verb = name.split(".", 1)[1]
    return not any(verb == v or verb.startswith(f"{v}_") or verb.endswith(f"_{v}") for v in _READ_VERBS)


# ---- reading the goal (all an attacker has) -------------------------------------------------------

class GoalReader:
    """Strings, numbers, times, names and dates an attacker can lift from the goal text."""

    def __init__(self, goal: str) -> None:
        self.goal = goal
        self.quoted = [a or b for a, b in re.findall(r"\"([^\"]+)\"|(?<!\w)'([^']+)'(?!\w)", goal)]
        self.times = re.findall(r"\b(?:[01]\d|2[0-3]):[0-5]\d\b", goal)
        self.iso_dates = re.findall(r"\b\d{4}-\d{2}-\d{2}\b", goal)
        self.phones = re.findall(r"\+?\d[\d-]{7,}\d", goal)
        self.files = re.findall(r"\b[\w-]+\.(?:jpg|png|pdf|m4a|xlsx)\b", goal)
        rest = re.sub(r"\+?\d[\d-]{7,}\d|\d{4}-\d{2}-\d{2}|\d\d:\d\d", " ", goal)
        self.numbers = [float(n) for n in re.findall(r"(?<![\w.])\d+(?:\.\d+)?", rest)]
        spans = sorted(_DURATIONS, key=len, reverse=True)
        self.minutes = [_DURATIONS[p] for p in spans if p in goal][:1]
        self.relations = re.findall(r"\bmy (\w+)", goal)
        body = re.sub(r"(^|[.:;!?]\s+)[A-Z][\w']*", r"\1", goal)  # drop sentence-initial words
        words = re.findall(r"[A-Z][\w'-]*(?: [A-Z][\w'-]*)*", body)
        self.names = [w for w in words if w.split()[0] not in _STOP]
        self.weekdays = [d for d in _WEEKDAYS if d in goal.lower()]
        self.emails = re.findall(r"[\w.]+@[\w.]+\.\w+", goal)

    def phrase(self) -> str:
        return (self.quoted or self.names or self.relations or [self.goal])[0]

    def person(self) -> str:
        return (self.names or self.relations or self.quoted or [self.goal])[0]

    def dates(self, now: datetime) -> list[str]:
        out = [*self.iso_dates, now.strftime("%Y-%m-%d"), (now + timedelta(days=1)).strftime("%Y-%m-%d")]
        for day in self.weekdays:
            ahead = (_WEEKDAYS.index(day) - now.weekday() - 1) % 7 + 1
            out.insert(len(self.iso_dates), (now + timedelta(days=ahead)).strftime("%Y-%m-%d"))
        return out

    def value(self, key: str, spec: dict[str, Any], now: datetime) -> Any:
        """A guess for argument `key` from the goal alone."""
        kind = spec.get("type")
        if spec.get("enum"):
            return next((v for v in spec["enum"] if str(v).lower().replace("_", " ") in self.goal.lower()),
                        spec["enum"][0])
        if kind == "boolean":
            return not any(w in self.goal.lower() for w in ("off", "stop", "no longer", "unstar"))
        if kind in ("integer", "number"):
            if key == "seconds" and self.minutes:
                return self.minutes[0] * 60
            if "min" in key and self.minutes:
                return self.minutes[0]
            return self.numbers[0] if self.numbers else max(1, int(spec.get("minimum", 1)))
        date, time = self.dates(now)[0], (self.times or ["09:00"])
        if kind == "array":
            if key == "to":
                return list(self.emails) or [self.person()]
            if key in ("days",):
                return []
            return [self.person()]
        if key == "phone":
            return self.phones[0] if self.phones else "+1-555-0100-0000"
        if key in ("due", "start") or key.endswith("_start"):
            return f"{date}T{time[0]}"
        if key == "end" or key.endswith("_end"):
            return f"{date}T{time[-1]}"
        if "time" in key:
            return time[0]
        if "date" in key or key == "check_in":
            return date
        if key in ("body", "text", "memo", "append", "message", "instruction", "value"):
            return self.quoted[0] if self.quoted else self.goal
        if key in ("contact", "person", "attendee", "name", "who"):
            return self.person()
        if key == "id" or key.endswith("_id") or key in ("from_account", "to_account", "file"):
            return (self.files or self.names or self.relations or ["1"])[0]
        return self.phrase()

    def arguments(self, schema: dict[str, Any], now: datetime) -> dict[str, Any]:
        props = schema.get("properties", {}) or {}
        required = set(schema.get("required", []) or [])
        return {k: self.value(k, v or {}, now) for k, v in props.items() if k in required or k in (
            "contact", "body", "label", "passengers", "quantity", "starred")}


def _now(observation: Observation) -> datetime:
    return datetime.fromtimestamp(observation.clock_ms / 1000, UTC)


def _overlap(goal: str, text: str) -> int:
    words = {w for w in re.findall(r"[a-z]{3,}", goal.lower())}
    return sum(w in words for w in re.findall(r"[a-z]{3,}", text.lower()))


class _Scripted:
    """A policy that plays a generator of actions built from the goal, catalogue and observations."""

    name = "scripted"
    max_actions = 29

    def begin(self, goal: str, catalogue: Any) -> None:
        self.goal = goal
        self.reader = GoalReader(goal)
        self.catalogue = catalogue
        self._script: Iterator[Any] | None = None
        self._last: Observation | None = None
        self._count = 0

    def script(self) -> Iterator[Any]:
        raise NotImplementedError

    def next_action(self, observation: Observation) -> Any:
        self._last = observation
        if self._script is None:
            self._script = self.script()
        self._count += 1
        if self._count > self.max_actions:
            return Finish()
        try:
            return next(self._script)
        except StopIteration:
            return Finish()

    @property
    def now(self) -> datetime:
        assert self._last is not None
        return _now(self._last)

    def tools(self, writes: bool | None = None) -> list[Any]:
        return [t for t in self.catalogue.tools if writes is None or getattr(t, "writes", _writes(t.name)) == writes]

    def call(self, tool: Any) -> ToolCall:
        return ToolCall(name=tool.name, arguments=self.reader.arguments(tool.parameters, self.now))
