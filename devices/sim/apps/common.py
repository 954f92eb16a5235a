"""Helpers the app modules share: record lookup (by id or by name), text matching over a row's
fields, row ordering, the device clock as ISO text."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from devices.sim.state import SimState, copy_json
from devices.sim.tools import BadArguments, NotFound

__all__ = [
    "DATE",
    "DATETIME",
    "TIME",
    "find_named",
    "match_fields",
    "matches",
    "now_iso",
    "out",
    "outs",
    "parse_dt",
    "pick_changes",
    "require",
    "sort_by",
]

Row = dict[str, Any]

# Formats used by several apps; the regexes are what the argument checker enforces.
TIME = r"([01]\d|2[0-3]):[0-5]\d"
DATE = r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
DATETIME = DATE + r"T" + TIME


def require(state: SimState, app: str, table: str, row_id: str, what: str) -> dict[str, Any]:
    """The row with `row_id`, or NotFound with a sentence naming the missing record."""
    row = state.get(app, table, row_id)
    if row is None:
        raise NotFound(f"There is no {what} with id '{row_id}'.")
    return row


def find_named(state: SimState, app: str, table: str, text: str, alt: str | None = None) -> Row | None:
    """The first row whose name is `text` (trimmed, case-insensitive) or, when `alt` names a field,
    whose `alt` is exactly `text`; None when there is none."""
    key = text.strip().lower()
    for row in state.table(app, table).values():
        if row["name"].lower() == key or (alt is not None and row[alt] == text):
            return row
    return None


def matches(query: str, *values: Any) -> bool:
    """Case-insensitive substring match of `query` against any of `values` (lists flattened)."""
    q = query.lower()
    for v in values:
        if isinstance(v, list):
            if any(q in str(x).lower() for x in v):
                return True
        elif v is not None and q in str(v).lower():
            return True
    return False


def match_fields(fields: Sequence[str], maybe: Sequence[str] = ()) -> Callable[[str, Row], bool]:
    """`matches(query, ...)` over a row's `fields` (which every row has), then its `maybe` fields
    (which a row may lack): the text search of a search tool or a list screen."""

    def hit(query: str, row: Row) -> bool:
        return matches(query, *(row[f] for f in fields), *(row.get(f) for f in maybe))

    return hit


def sort_by(*fields: str, reverse: bool = False) -> Callable[[Iterable[Row]], list[Row]]:
    """Rows → a list sorted by those fields (in that order of importance), optionally descending."""
    return lambda rows: sorted(rows, key=lambda r: tuple(r[f] for f in fields), reverse=reverse)


def now_iso(state: SimState) -> str:
    """The device clock as 'YYYY-MM-DDTHH:MM' (UTC)."""
    return datetime.fromtimestamp(state.clock_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M")


def out(row: dict[str, Any]) -> dict[str, Any]:
    """A copy of a row that is safe to hand to the agent."""
    return copy_json(row)


def outs(rows: Any) -> list[dict[str, Any]]:
    """Copies of rows that are safe to hand to the agent."""
    return [copy_json(r) for r in rows]


def pick_changes(args: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """The subset of `args` naming updatable fields; BadArguments when there is none."""
    changes = {k: args[k] for k in fields if k in args}
    if not changes:
        raise BadArguments(f"Give at least one field to change: {', '.join(fields)}.")
    return changes


def parse_dt(value: str, label: str) -> datetime:
    """'YYYY-MM-DDTHH:MM' as a datetime; BadArguments naming argument `label` when it is no real one."""
    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M")
    except ValueError:
        raise BadArguments(f"Argument '{label}' is not a real date and time: {value!r}.") from None
