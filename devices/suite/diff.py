"""Whole-state-diff checking: the change initial → final must be exactly the expected change.

A template states what should change as a list of expectations (rows added, updated or
removed, settings set, memory written, the answer given, the skill or sub-agent chosen).
`check_change` diffs the two final-state JSONs over tables, settings and (when asked)
memory; every expectation is a sub-goal, and every change no expectation claims is a
violation ("extra write"), as in tau-bench's database comparison. The score is 1 only
when every sub-goal holds and nothing else happened; `progress` is the share of
sub-goals met (the trainer's CARE progress reward reads it).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from devices.suite.state_view import StateView
from schemas.envelope import Frozen

__all__ = [
    "Add",
    "Allow",
    "AnswerIs",
    "Called",
    "ChangeSet",
    "CheckResult",
    "Delegated",
    "Expectation",
    "MemoryWritten",
    "Remove",
    "RemoveOneOf",
    "RowChange",
    "Setting",
    "SkillUsed",
    "Update",
    "answer_equals",
    "check_change",
    "diff_states",
    "mentions",
    "names",
    "norm_text",
    "same_value",
]

logger = logging.getLogger(__name__)

# Prices and totals compare within this tolerance so 12.5 and 12.50 agree.
_TOLERANCE = 1e-6
# Punctuation an agent may wrap an answer in ("Priya Raman." or '"7"') without changing it.
_WRAP = " \t\n.,;:!?\"'`()[]{}"
_CLOCK = re.compile(r"\d{1,2}:\d{2}")
_NUMBER = re.compile(r"[-+]?\$?\d+(?:,\d{3})*(?:\.\d+)?%?")


class CheckResult(Frozen):
    """What a checker found: score 1 only when every sub-goal holds and nothing else changed."""

    score: float = Field(ge=0.0, le=1.0)
    progress: float = Field(ge=0.0, le=1.0, description="Share of sub-goals met.")
    subgoals: list[tuple[str, bool]] = Field(default_factory=list)
    violations: list[str] = Field(default_factory=list, description="Extra writes, wrong tries.")

    @property
    def passed(self) -> bool:
        return self.score >= 1.0


# ---- normalisation ---------------------------------------------------------------------------

def norm_text(value: Any) -> str:
    """Case-folded, whitespace-collapsed text without wrapping punctuation."""
    return " ".join(str(value).split()).casefold().strip(_WRAP)


def _number(text: str) -> float | None:
    if not _NUMBER.fullmatch(text):
        return None
    try:
        return float(text.replace("$", "").replace(",", "").rstrip("%"))
    except ValueError:
        return None


def same_value(actual: Any, expected: Any) -> bool:
    """Equality after normalisation: strings case/space-insensitive, numbers within tolerance,
    lists order-insensitive, dicts field by field."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return math.isclose(float(actual), float(expected), abs_tol=_TOLERANCE)
    if isinstance(expected, str) and isinstance(actual, str):
        return norm_text(actual) == norm_text(expected)
    if isinstance(expected, (list, tuple)) and isinstance(actual, (list, tuple)):
        if len(actual) != len(expected):
            return False
        left = sorted(map(_canon, actual))
        return left == sorted(map(_canon, expected))
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        return set(actual) == set(expected) and all(same_value(actual[k], v) for k, v in expected.items())
    return actual == expected


def _canon(value: Any) -> str:
    if isinstance(value, str):
        return repr(norm_text(value))
    if isinstance(value, (list, tuple)):
        return repr(sorted(map(_canon, value)))
    if isinstance(value, Mapping):
        return repr(sorted((k, _canon(v)) for k, v in value.items()))
    if isinstance(value, float) and value.is_integer():
        return repr(int(value))
    return repr(value)


def answer_equals(answer: str | None, expected: Any) -> bool:
    """The whole answer is the expected value (a number, or text), after normalisation.

    "12.50", "$12.5" and "12.5" all equal 12.5; "Priya Raman." equals "priya raman"; a list
    of candidates ("3, 4, 5" or "Priya or Tomasz") never equals one value.
    """
    if answer is None:
        return False
    text = norm_text(answer)
    forms = expected if isinstance(expected, (tuple, list)) else (expected,)
    for form in forms:
        if isinstance(form, (int, float)) and not isinstance(form, bool):
            got = _number(text)
            if got is not None and math.isclose(got, float(form), abs_tol=_TOLERANCE):
                return True
        elif text == norm_text(form):
            return True
        elif (_CLOCK.fullmatch(text) and isinstance(form, str) and _CLOCK.fullmatch(form.strip())
              and [int(x) for x in text.split(":")] == [int(x) for x in form.strip().split(":")]):
            return True  # 7:45 is 07:45
    return False


# ---- the diff ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class RowChange:
    """One row that was added, removed or changed."""

    app: str
    table: str
    row_id: str
    kind: str  # "added" | "removed" | "changed"
    before: dict[str, Any] | None
    after: dict[str, Any] | None

    @property
    def fields(self) -> frozenset[str]:
        """The fields whose value differs (every field for an added or removed row)."""
        old, new = self.before or {}, self.after or {}
        return frozenset(k for k in set(old) | set(new) if old.get(k) != new.get(k))

    def describe(self) -> str:
        if self.kind == "changed":
            return f"{self.app}.{self.table} row {self.row_id} changed ({', '.join(sorted(self.fields))})"
        return f"{self.app}.{self.table} row {self.row_id} {self.kind}"


@dataclass
class ChangeSet:
    """The whole difference between two final states."""

    rows: list[RowChange] = field(default_factory=list)
    settings: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    memory: dict[str, tuple[Any, Any]] = field(default_factory=dict)

    def added(self, app: str, table: str) -> list[RowChange]:
        return [c for c in self.rows if c.kind == "added" and c.app == app and c.table == table]

    def of(self, app: str, table: str, row_id: str) -> RowChange | None:
        for c in self.rows:
            if c.app == app and c.table == table and c.row_id == row_id:
                return c
        return None

    @property
    def empty(self) -> bool:
        return not (self.rows or self.settings or self.memory)


def diff_states(before: StateView, after: StateView, *, memory: bool = True) -> ChangeSet:
    """Every row, setting and (optionally) memory entry that differs from `before` to `after`."""
    out = ChangeSet()
    old_tables, new_tables = before.tables(), after.tables()
    for app in sorted(set(old_tables) | set(new_tables)):
        old_app, new_app = old_tables.get(app, {}), new_tables.get(app, {})
        for table in sorted(set(old_app) | set(new_app)):
            old, new = old_app.get(table, {}), new_app.get(table, {})
            if old is new:
                continue
            for row_id, row in new.items():
                prev = old.get(row_id)
                if prev is None:
                    out.rows.append(RowChange(app, table, row_id, "added", None, row))
                elif prev != row:
                    out.rows.append(RowChange(app, table, row_id, "changed", prev, row))
            for row_id, row in old.items():
                if row_id not in new:
                    out.rows.append(RowChange(app, table, row_id, "removed", row, None))
    old_s, new_s = before.settings, after.settings
    for key in sorted(set(old_s) | set(new_s)):
        if old_s.get(key) != new_s.get(key):
            out.settings[key] = (old_s.get(key), new_s.get(key))
    if memory:
        old_m, new_m = before.memory, after.memory
        for key in sorted(set(old_m) | set(new_m)):
            if old_m.get(key) != new_m.get(key):
                out.memory[key] = (old_m.get(key), new_m.get(key))
    return out


def names(text: Any, value: Any) -> bool:
    """Whether `text` mentions `value` as a whole (12 Canal St is not named by 112 Canal St)."""
    return re.search(rf"(?<!\w){re.escape(norm_text(value))}(?!\w)", norm_text(text)) is not None


def mentions(value: Any, *others: Any) -> tuple[Any, ...]:
    """A field that must mention `value` and none of `others` (the other candidates the world
    holds: the other branch of a conditional, another place's address), so a text that lists
    every candidate does not pass for the one the goal implies."""
    return ("~", value, tuple(o for o in others if o is not None and norm_text(o) != norm_text(value)))


def _row_has(row: Mapping[str, Any] | None, fields: Mapping[str, Any]) -> bool:
    if row is None:
        return False
    for key, want in fields.items():
        have = row.get(key)
        if isinstance(want, tuple) and len(want) in (2, 3) and want[0] == "~":
            if not isinstance(have, str) or norm_text(want[1]) not in norm_text(have):
                return False
            if len(want) == 3 and any(names(have, o) for o in want[2]):
                return False
        elif not same_value(have, want):
            return False
    return True


# ---- expectations ----------------------------------------------------------------------------

class Expectation:
    """One part of the expected change. `goal` ones are sub-goals; all may claim changes."""

    goal: bool = True

    @property
    def label(self) -> str:
        return repr(self)

    def met(self, changes: ChangeSet, before: StateView, after: StateView) -> bool:
        return True

    def claims_row(self, change: RowChange) -> bool:
        return False

    def claims_setting(self, key: str) -> bool:
        return False

    def claims_memory(self, key: str, value: Any) -> bool:
        return False

    def violations(self, before: StateView, after: StateView) -> list[str]:
        """Wrong tries this expectation forbids (another skill, another sub-agent)."""
        return []


@dataclass(frozen=True, repr=False)
class Add(Expectation):
    """Exactly `count` new rows in app.table carry `fields` (("~", text) = contains text)."""

    app: str
    table: str
    fields: Mapping[str, Any]
    count: int = 1

    @property
    def label(self) -> str:
        return f"add {self.app}.{self.table} {dict(self.fields)}"

    def met(self, changes: ChangeSet, before: StateView, after: StateView) -> bool:
        return sum(_row_has(c.after, self.fields) for c in changes.added(self.app, self.table)) == self.count

    def claims_row(self, change: RowChange) -> bool:
        return (change.kind == "added" and change.app == self.app and change.table == self.table
                and _row_has(change.after, self.fields))


@dataclass(frozen=True, repr=False)
class _OneRow(Expectation):
    """An expectation about one existing row: `row_id` in app.table."""

    app: str
    table: str
    row_id: str

    @property
    def where(self) -> str:
        return f"{self.app}.{self.table}[{self.row_id}]"

    def change_of(self, changes: ChangeSet) -> RowChange | None:
        """This row's change, if any."""
        return changes.of(self.app, self.table, self.row_id)

    def is_row(self, change: RowChange, kind: str) -> bool:
        """Whether `change` is of `kind` and to this row."""
        return (change.kind == kind and change.app == self.app and change.table == self.table
                and change.row_id == self.row_id)


@dataclass(frozen=True, repr=False)
class Update(_OneRow):
    """Row `row_id` ends with `fields`, and no field outside `fields` (or `free`) changed."""

    fields: Mapping[str, Any]
    free: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"update {self.where} {dict(self.fields)}"

    def met(self, changes: ChangeSet, before: StateView, after: StateView) -> bool:
        change = self.change_of(changes)
        return (change is not None and change.kind == "changed"
                and _row_has(change.after, self.fields)
                and change.fields <= set(self.fields) | set(self.free))

    def claims_row(self, change: RowChange) -> bool:
        return self.is_row(change, "changed") and change.fields <= set(self.fields) | set(self.free)


@dataclass(frozen=True, repr=False)
class Remove(_OneRow):
    """Row `row_id` is gone."""

    @property
    def label(self) -> str:
        return f"remove {self.where}"

    def met(self, changes: ChangeSet, before: StateView, after: StateView) -> bool:
        change = self.change_of(changes)
        return change is not None and change.kind == "removed"

    def claims_row(self, change: RowChange) -> bool:
        return self.is_row(change, "removed")


@dataclass(frozen=True, repr=False)
class RemoveOneOf(Expectation):
    """Exactly one of the rows `row_ids` is gone (duplicates: either copy may go)."""

    app: str
    table: str
    row_ids: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"remove one of {self.app}.{self.table}{list(self.row_ids)}"

    def met(self, changes: ChangeSet, before: StateView, after: StateView) -> bool:
        gone = [c for c in changes.rows if c.kind == "removed" and c.app == self.app
                and c.table == self.table and c.row_id in self.row_ids]
        return len(gone) == 1

    def claims_row(self, change: RowChange) -> bool:
        return (change.kind == "removed" and change.app == self.app and change.table == self.table
                and change.row_id in self.row_ids)


@dataclass(frozen=True, repr=False)
class Allow(Expectation):
    """Side effects the expected change implies (stock going down at checkout); not a sub-goal.

    Claims changes in app.table to rows in `ids` (None = any row) of `kinds`, touching only
    `fields` (None = any field).
    """

    app: str
    table: str
    ids: tuple[str, ...] | None = None
    kinds: tuple[str, ...] = ("added", "changed", "removed")
    fields: tuple[str, ...] | None = None
    goal: bool = False

    def claims_row(self, change: RowChange) -> bool:
        return (change.app == self.app and change.table == self.table and change.kind in self.kinds
                and (self.ids is None or change.row_id in self.ids)
                and (self.fields is None or change.fields <= set(self.fields)))


@dataclass(frozen=True, repr=False)
class Setting(Expectation):
    """Setting `key` ends as `value` (and changed)."""

    key: str
    value: Any

    @property
    def label(self) -> str:
        return f"setting {self.key}={self.value!r}"

    def met(self, changes: ChangeSet, before: StateView, after: StateView) -> bool:
        return self.key in changes.settings and same_value(after.settings.get(self.key), self.value)

    def claims_setting(self, key: str) -> bool:
        return key == self.key


@dataclass(frozen=True, repr=False)
class MemoryWritten(Expectation):
    """Exactly one memory entry was written whose key and value mention every one of `values`
    and none of `excluded` (the other candidates: a namesake, the old code), so an entry that
    dumps every candidate holds a collection, not the value."""

    values: tuple[Any, ...]
    excluded: tuple[Any, ...] = ()

    @property
    def label(self) -> str:
        return f"memory mentions {list(self.values)}" + (f", not {list(self.excluded)}" if self.excluded else "")

    def _mentions(self, key: str, value: Any) -> bool:
        blob = norm_text(f"{key} {value}")
        return (all(norm_text(v) in blob for v in self.values)
                and not any(names(blob, v) for v in self.excluded))

    def met(self, changes: ChangeSet, before: StateView, after: StateView) -> bool:
        return sum(self._mentions(k, new) for k, (_, new) in changes.memory.items()) == 1

    def claims_memory(self, key: str, value: Any) -> bool:
        return self._mentions(key, value)


@dataclass(frozen=True, repr=False)
class AnswerIs(Expectation):
    """The final answer equals `value` after normalisation (`value` may be a tuple of spellings
    of the one right value, e.g. ("Priya Raman", "Priya"))."""

    value: Any

    @property
    def label(self) -> str:
        return f"answer {self.value!r}"

    def met(self, changes: ChangeSet, before: StateView, after: StateView) -> bool:
        return answer_equals(after.answer, self.value)


def _new_log(before: StateView, after: StateView) -> list[Any]:
    return after.log[len(before.log):]


@dataclass(frozen=True, repr=False)
class Called(Expectation):
    """The main agent (or `agent`) made the call `name` with `arguments` successfully (and, when
    `exclusive`, no call of `name` with other arguments)."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    agent: str = "main"
    # When set, a call of the same tool with other arguments is a wrong try (no spraying).
    exclusive: bool = True

    @property
    def label(self) -> str:
        return f"call {self.name}({dict(self.arguments)})"

    def _mine(self, e: Any) -> bool:
        return e.kind == "tool_call" and e.name == self.name and e.agent == self.agent

    def met(self, changes: ChangeSet, before: StateView, after: StateView) -> bool:
        return any(self._mine(e) and e.ok and _row_has(e.arguments, self.arguments)
                   for e in _new_log(before, after))

    def violations(self, before: StateView, after: StateView) -> list[str]:
        if not self.exclusive:
            return []
        return [f"wrong call: {self.name}({e.arguments})" for e in _new_log(before, after)
                if self._mine(e) and not _row_has(e.arguments, self.arguments)]


@dataclass(frozen=True, repr=False)
class SkillUsed(Expectation):
    """Skill `skill` ran successfully with `arguments`; every other skill tried is a violation
    (credit follows the choice the policy made, and wrong tries cost)."""

    skill: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    max_tries: int = 1

    @property
    def label(self) -> str:
        return f"skill {self.skill}({dict(self.arguments)})"

    def met(self, changes: ChangeSet, before: StateView, after: StateView) -> bool:
        return any(e.kind == "skill" and e.name == self.skill and e.ok
                   and _row_has(e.arguments, self.arguments) for e in _new_log(before, after))

    def violations(self, before: StateView, after: StateView) -> list[str]:
        tries = [e for e in _new_log(before, after) if e.kind == "skill"]
        out = [f"wrong skill tried: {e.name}" for e in tries if e.name != self.skill]
        mine = [e for e in tries if e.name == self.skill]
        if len(mine) > self.max_tries:
            out.append(f"skill {self.skill} run {len(mine)} times")
        return out


@dataclass(frozen=True, repr=False)
class Delegated(Expectation):
    """Work was handed to sub-agent `agent` with an instruction/arguments mentioning every one
    of `context`; a delegation to any agent not in `others_ok` is a violation."""

    agent: str
    context: tuple[Any, ...] = ()
    others_ok: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"delegate to {self.agent} with {list(self.context)}"

    def met(self, changes: ChangeSet, before: StateView, after: StateView) -> bool:
        for e in _new_log(before, after):
            if e.kind == "delegate" and e.name == self.agent and e.agent == "main":
                blob = norm_text(repr(e.arguments))
                if all(norm_text(v) in blob for v in self.context):
                    return True
        return False

    def violations(self, before: StateView, after: StateView) -> list[str]:
        allowed = {self.agent, *self.others_ok}
        return [f"delegated to {e.name} as well" for e in _new_log(before, after)
                if e.kind == "delegate" and e.name not in allowed]


# ---- the check ---------------------------------------------------------------------------------

def check_change(before: StateView, after: StateView, expected: Sequence[Expectation], *,
                 memory: bool = False, extra_violations: Iterable[str] = ()) -> CheckResult:
    """Scores the change before → after against `expected`.

    Sub-goals are the goal expectations; violations are the changes no expectation claims
    (rows, settings, and memory when `memory` is True) plus the wrong tries expectations
    report. Score 1.0 iff every sub-goal holds and there is no violation, else 0.0.
    """
    changes = diff_states(before, after, memory=memory)
    subgoals = [(e.label, bool(e.met(changes, before, after))) for e in expected if e.goal]
    violations = list(extra_violations)
    for change in changes.rows:
        if not any(e.claims_row(change) for e in expected):
            violations.append(f"extra write: {change.describe()}")
    for key in changes.settings:
        if not any(e.claims_setting(key) for e in expected):
            violations.append(f"extra write: setting {key}")
    for key, (_, value) in changes.memory.items():
        if not any(e.claims_memory(key, value) for e in expected):
            violations.append(f"extra write: memory {key}")
    for e in expected:
        violations.extend(e.violations(before, after))
    met = sum(ok for _, ok in subgoals)
    progress = met / len(subgoals) if subgoals else (0.0 if violations else 1.0)
    score = 1.0 if met == len(subgoals) and not violations else 0.0
    return CheckResult(score=score, progress=progress, subgoals=subgoals, violations=violations)
