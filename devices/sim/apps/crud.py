"""The CRUD-tools kit: generators that register the tool shapes the apps repeat on one table.

Each registers the tool `name` ("<app>.<verb>") on one table of its app, in the order it is
called (which is the order of the tool list), and returns the handler:

- `get_tool`: one row by id; `delete_tool`: delete one row by id and return it;
- `change_tool`: update one row by id with fields computed from the arguments, and its two common
  cases `update_tool` (the optional arguments given, at least one) and `flag_tool` (one field set
  from its own argument, e.g. star/unstar);
- `list_tool`: the rows, optionally filtered and ordered; `search_tool`: the rows whose text
  fields contain the 'query' argument, optionally filtered and ordered (an app passes the same
  `common.match_fields` predicate to its list screen's search field).

For the by-id tools `what` names the record in NotFound ("There is no <what> with id '…'.") and
`ident` is the id argument's description, or the whole {"id": schema} parameter where the app
shares one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from devices.kit.validators import string
from devices.sim.apps.common import out, outs, pick_changes, require
from devices.sim.state import SimState
from devices.sim.tools import tool

__all__ = ["change_tool", "delete_tool", "flag_tool", "get_tool", "list_tool", "search_tool", "update_tool"]

Row = dict[str, Any]
Args = dict[str, Any]
Ident = str | dict[str, Any]
Handler = Callable[[SimState, Args], Any]
Order = Callable[[Iterable[Row]], Iterable[Row]]
Where = Callable[[Row, Args], Any]


def _app(name: str) -> str:
    return name.split(".", 1)[0]


def _id_param(ident: Ident) -> dict[str, Any]:
    return ident if isinstance(ident, dict) else {"id": string(ident, minLength=1)}


def get_tool(name: str, table: str, what: str, ident: Ident) -> Handler:
    """"Get one <what> by id.": the row, or NotFound naming the missing `what`."""
    app = _app(name)

    @tool(name, f"Get one {what} by id.", f"The {what} record.", _id_param(ident))
    def get(state: SimState, args: Args) -> Any:
        return out(require(state, app, table, args["id"], what))

    return get


def delete_tool(name: str, description: str, returns: str, table: str, what: str, ident: Ident) -> Handler:
    """Deletes the row with that id and returns it (NotFound naming `what` when there is none)."""
    app = _app(name)

    @tool(name, description, returns, _id_param(ident))
    def delete(state: SimState, args: Args) -> Any:
        require(state, app, table, args["id"], what)
        return out(state.delete(app, table, args["id"]))

    return delete


def change_tool(name: str, description: str, returns: str, table: str, what: str, ident: Ident,
                changes: Callable[[Args], dict[str, Any]], required: dict[str, Any] | None = None,
                optional: dict[str, Any] | None = None) -> Handler:
    """Updates the row with that id by `changes(args)` and returns it (NotFound naming `what` when
    there is none); `required` and `optional` are the arguments besides the id."""
    app = _app(name)

    @tool(name, description, returns, {**_id_param(ident), **(required or {})}, optional)
    def change(state: SimState, args: Args) -> Any:
        require(state, app, table, args["id"], what)
        return out(state.update(app, table, args["id"], changes(args)))

    return change


def update_tool(name: str, description: str, returns: str, table: str, what: str, ident: Ident,
                fields: dict[str, Any]) -> Handler:
    """A `change_tool` whose optional arguments `fields` are the row's updatable fields: it sets
    those given (BadArguments listing them when none is)."""
    names = tuple(fields)
    return change_tool(name, description, returns, table, what, ident,
                       lambda args: pick_changes(args, names), optional=fields)


def flag_tool(name: str, description: str, returns: str, table: str, what: str, ident: Ident,
              field: str, schema: dict[str, Any]) -> Handler:
    """A `change_tool` that sets the row's `field` to its required argument of the same name."""
    return change_tool(name, description, returns, table, what, ident,
                       lambda args: {field: args[field]}, {field: schema})


def _listed(rows: Iterable[Row], order: Order | None) -> list[dict[str, Any]]:
    return outs(rows if order is None else order(rows))


def list_tool(name: str, description: str, returns: str, table: str, *, where: Where | None = None,
              order: Order | None = None, optional: dict[str, Any] | None = None) -> Handler:
    """The rows of `table` (those `where(row, args)` keeps), `order`ed; `optional` are its filter
    arguments."""
    app = _app(name)

    @tool(name, description, returns, optional=optional)
    def list_rows(state: SimState, args: Args) -> Any:
        rows = state.table(app, table).values()
        return _listed(rows if where is None else (r for r in rows if where(r, args)), order)

    return list_rows


def search_tool(name: str, description: str, returns: str, table: str, hit: Callable[[str, Row], bool], *,
                where: Where | None = None, order: Order | None = None,
                optional: dict[str, Any] | None = None) -> Handler:
    """The rows of `table` that contain the required 'query' argument, as `hit(query, row)` (see
    common.match_fields) tells, and that `where(row, args)` keeps (tested in that order), `order`ed;
    `optional` are its filter arguments."""
    app = _app(name)

    @tool(name, description, returns, {"query": string("Text to look for.", minLength=1)}, optional)
    def search(state: SimState, args: Args) -> Any:
        query = args["query"]
        return _listed((r for r in state.table(app, table).values()
                        if hit(query, r) and (where is None or where(r, args))), order)

    return search
