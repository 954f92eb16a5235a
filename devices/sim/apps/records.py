"""Screens for a plain record app: a searchable list of rows and a detail view per row."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from devices.sim.apps.common import matches
from devices.sim.apps.ui import detail_header, list_screen, missing
from devices.sim.state import SimState

__all__ = ["record_screens"]

Row = dict[str, Any]


def record_screens(app: str, table: str, title: str, *, row_title: Callable[[Row], str],
                   row_subtitle: Callable[[Row], str], lines: Callable[[Row], Sequence[tuple[str, Any, str]]],
                   search: Sequence[str] = (), extra: Callable[[Any, SimState, Row], None] | None = None,
                   order: Callable[[Row], Any] | None = None, what: str = "record",
                   ) -> dict[str, Callable[..., None]]:
    """{'list', 'detail'} renderers for `app.table`; `extra` adds buttons to the detail view."""

    def _item(row: Row) -> tuple:
        return (row_title(row), row_subtitle(row), lambda g, i=row["id"]: g.open("detail", id=i),
                None, None, None)

    def _list(b: Any, state: SimState, frame: dict[str, Any]) -> None:
        rows = list(state.table(app, table).values())
        if order is not None:
            rows.sort(key=order)
        list_screen(b, frame, title, [_item(r) for r in rows],
                    search=(lambda q: [_item(r) for r in rows if matches(q, *(r.get(f) for f in search))])
                    if search else None)

    def _detail(b: Any, state: SimState, frame: dict[str, Any]) -> None:
        row = state.get(app, table, frame["params"]["id"])
        if row is None:
            return missing(b, what)
        detail_header(b, row_title(row), lines(row))
        if extra is not None:
            extra(b, state, row)
        return None

    return {"list": _list, "detail": _detail}
