"""Checker building blocks: each reads SimState (tables, settings, memory, answer, log), never a claim."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "answer_has",
    "answer_text",
    "args_match",
    "called",
    "calls",
    "delegated_call",
    "delegations",
    "find_rows",
    "log_entries",
    "memory_has",
    "memory_reads",
    "norm",
    "partial",
    "row_matches",
    "rows",
    "skill_ran",
    "skill_runs",
    "values_match",
]

# Numbers compare within this tolerance (prices, totals) so 12.5 and 12.50 agree.
_FLOAT_TOLERANCE = 1e-6


def norm(value: Any) -> Any:
    """Normalises a JSON value for comparison: strings case-folded and trimmed."""
    if isinstance(value, str):
        return " ".join(value.split()).casefold()
    if isinstance(value, (list, tuple)):
        return [norm(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): norm(v) for k, v in value.items()}
    return value


def values_match(actual: Any, expected: Any) -> bool:
    """Equality after normalisation; numbers within tolerance; lists order-insensitive."""
    a, e = norm(actual), norm(expected)
    if isinstance(e, bool) or isinstance(a, bool):
        return a is e or a == e and type(a) is type(e)
    if isinstance(e, (int, float)) and isinstance(a, (int, float)):
        return math.isclose(float(a), float(e), abs_tol=_FLOAT_TOLERANCE)
    if isinstance(e, str) and isinstance(a, (int, float)) or isinstance(a, str) and isinstance(
            e, (int, float)):
        return str(a).strip() == str(e).strip()
    if isinstance(e, list) and isinstance(a, list):
        return sorted(map(repr, a)) == sorted(map(repr, e))
    return a == e


def args_match(actual: Mapping[str, Any] | None, expected: Mapping[str, Any]) -> bool:
    """Every expected argument is present with a matching value (extra optional ones allowed)."""
    actual = actual or {}
    return all(k in actual and values_match(actual[k], v) for k, v in expected.items())


# ---- the log ------------------------------------------------------------------------------
def log_entries(state: Any, kind: str | None = None) -> list[Any]:
    """Log entries of one kind ('tool_call', 'skill', 'delegate', 'memory_read', ...)."""
    return [e for e in state.log if kind is None or e.kind == kind]


def calls(state: Any, name: str, *, agent: str | None = "main", parent: Any = ...,
          ok: bool | None = True) -> list[Any]:
    """Tool-call log entries for `name`, by `agent` (None = any), under `parent` (... = any)."""
    out = []
    for e in log_entries(state, "tool_call"):
        if e.name != name or (agent is not None and e.agent != agent):
            continue
        if parent is not ... and e.parent != parent:
            continue
        if ok is not None and bool(e.ok) != ok:
            continue
        out.append(e)
    return out


def called(state: Any, name: str, expected: Mapping[str, Any], **where: Any) -> bool:
    """Whether a successful call of `name` with the expected arguments is in the log."""
    return any(args_match(e.arguments, expected) for e in calls(state, name, **where))


def skill_runs(state: Any, skill: str, expected: Mapping[str, Any] | None = None) -> list[Any]:
    """Successful 'skill' log entries for `skill` whose arguments match `expected`."""
    return [e for e in log_entries(state, "skill")
            if e.name == skill and e.ok and args_match(e.arguments, expected or {})]


def skill_ran(state: Any, skill: str, expected: Mapping[str, Any] | None = None) -> bool:
    """The skill was chosen with the right arguments, and every step it logged succeeded."""
    for run in skill_runs(state, skill, expected):
        steps = [e for e in log_entries(state, "tool_call")
                 if e.step == run.step and e.parent == skill and e.agent == run.agent]
        if steps and all(e.ok for e in steps):
            return True
    return False


def delegations(state: Any, agent: str) -> list[Any]:
    """'delegate' log entries that handed work to `agent`."""
    return [e for e in log_entries(state, "delegate") if e.name == agent]


def delegated_call(state: Any, agent: str, name: str, expected: Mapping[str, Any]) -> bool:
    """`agent` (a sub-agent) made the call `name(expected...)` successfully under a delegation."""
    if not delegations(state, agent):
        return False
    return any(e.parent == agent and args_match(e.arguments, expected)
               for e in calls(state, name, agent=agent))


# ---- tables, memory, answer ---------------------------------------------------------------
def rows(state: Any, app: str, table: str) -> list[dict[str, Any]]:
    """A table's rows (an unknown table reads as empty, so a checker scores 0, not crashes)."""
    try:
        return list(state.rows(app, table))
    except (KeyError, LookupError, ValueError):
        return []


def row_matches(row: Mapping[str, Any], expected: Mapping[str, Any]) -> bool:
    """Every expected field matches; a string expected in a string field must be contained
    when given as ('~', text)."""
    for key, want in expected.items():
        have = row.get(key)
        if isinstance(want, tuple) and len(want) == 2 and want[0] == "~":
            if not isinstance(have, str) or norm(want[1]) not in norm(have):
                return False
        elif not values_match(have, want):
            return False
    return True


def find_rows(state: Any, app: str, table: str, **expected: Any) -> list[dict[str, Any]]:
    """Rows of `app.table` matching every expected field (see `row_matches`)."""
    return [r for r in rows(state, app, table) if row_matches(r, expected)]


def answer_text(state: Any) -> str:
    answer = state.answer
    return "" if answer is None else str(answer)


def answer_has(state: Any, *values: Any) -> bool:
    """The final answer contains every value (case- and space-insensitive)."""
    text = norm(answer_text(state))
    return bool(text) and all(norm(str(v)) in text for v in values)


def answer_has_number(state: Any, value: float, decimals: int) -> bool:
    """The answer states `value` as a whole number token, written with `decimals` places or as
    Python prints it (12.50 or 12.5), so '3' never matches inside '13'."""
    text = answer_text(state)
    forms = {f"{value:.{decimals}f}", str(value)}
    return any(re.search(rf"(?<![\d.]){re.escape(form)}(?![\d])", text) for form in forms)


def memory_has(state: Any, *values: Any) -> bool:
    """Some single memory entry (key plus value) mentions every value."""
    for key, value in state.memory.items():
        blob = norm(f"{key} {value}")
        if all(norm(str(v)) in blob for v in values):
            return True
    return False


def memory_reads(state: Any) -> list[Any]:
    return [e for e in log_entries(state, "memory_read") if e.ok]


def partial(parts: Iterable[tuple[float, bool]]) -> float:
    """Weighted partial credit: sum of the weights of the parts that hold, clipped to [0, 1]."""
    score = sum(w for w, holds in parts if holds)
    return max(0.0, min(1.0, score))
