"""A plain record app's kit: screens (a searchable list of rows and a detail view per row, and
the detail view's delete button) and the by-id tools on a table (`get_tool`, `delete_tool`,
`change_tool`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from devices.kit.validators import string
from devices.sim.apps.common import matches, out, require
from devices.sim.apps.ui import detail_header, list_screen, missing
from devices.sim.state import SimState
from devices.sim.tools import tool

__all__ = ["change_tool", "delete_button", "delete_tool", "get_tool", "record_screens"]

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


def delete_button(b: Any, tool_name: str, row_id: str, done: str) -> None:
    """A "Delete" button for a detail view: calls `tool_name` on the row, goes back, says `done`."""

    def delete(g: Any, i: str = row_id) -> str:
        g.call(tool_name, {"id": i})
        g.back()
        return done

    b.button("Delete", "delete", delete)


# ---- by-id tools ---------------------------------------------------------------------------------
# Each registers the tool `name` ("<app>.<verb>") on one table of its app; `ident` is the id
# argument's description, or the whole {"id": schema} parameter where the app shares one.

Ident = str | dict[str, Any]
Handler = Callable[[SimState, dict[str, Any]], Any]


def _id_param(ident: Ident) -> dict[str, Any]:
    return ident if isinstance(ident, dict) else {"id": string(ident, minLength=1)}


def get_tool(name: str, table: str, what: str, ident: Ident) -> Handler:
    """"Get one <what> by id.": the row, or NotFound naming the missing `what`."""
    app = name.split(".", 1)[0]

    @tool(name, f"Get one {what} by id.", f"The {what} record.", _id_param(ident))
    def get(state: SimState, args: dict[str, Any]) -> Any:
        return out(require(state, app, table, args["id"], what))

    return get


def delete_tool(name: str, description: str, returns: str, table: str, what: str, ident: Ident) -> Handler:
    """Deletes the row with that id and returns it (NotFound naming `what` when there is none)."""
    app = name.split(".", 1)[0]

    @tool(name, description, returns, _id_param(ident))
    def delete(state: SimState, args: dict[str, Any]) -> Any:
        require(state, app, table, args["id"], what)
        return out(state.delete(app, table, args["id"]))

    return delete


def change_tool(name: str, description: str, returns: str, table: str, what: str, ident: Ident,
                changes: Callable[[dict[str, Any]], dict[str, Any]], required: dict[str, Any] | None = None,
                optional: dict[str, Any] | None = None) -> Handler:
    """Updates the row with that id by `changes(args)` and returns it (NotFound naming `what` when
    there is none); `required` and `optional` are the arguments besides the id."""
    app = name.split(".", 1)[0]

    @tool(name, description, returns, {**_id_param(ident), **(required or {})}, optional)
    def change(state: SimState, args: dict[str, Any]) -> Any:
        require(state, app, table, args["id"], what)
        return out(state.update(app, table, args["id"], changes(args)))

    return change
