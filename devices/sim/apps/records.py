"""A record app's screen kit: the searchable list of a table's rows (`record_list`), a row's detail
view (`record_detail`), the create/edit form (`edit_form`), all three for an app whose rows are
edited in a form (`editable_screens`) or list and detail for a plain one (`record_screens`), and
the pieces those views share: a row as a list item (`row_item`), clicks that open a row
(`open_detail`, `mark_and_open`), a row's on/off field (`Toggle`: switch, flip, subtitle mark)
and the Edit and Delete buttons (`edit_delete_buttons`, `delete_button`).

The tools these screens call come from the CRUD-tools kit, devices.sim.apps.crud."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from devices.sim.apps.common import match_fields
from devices.sim.apps.ui import Item, detail_header, form_screen, list_screen, missing
from devices.sim.state import SimState

__all__ = [
    "Toggle",
    "delete_button",
    "edit_delete_buttons",
    "edit_form",
    "editable_screens",
    "mark_and_open",
    "open_detail",
    "record_detail",
    "record_list",
    "record_screens",
    "row_item",
]

Row = dict[str, Any]
Screen = Callable[[Any, SimState, dict[str, Any]], None]
Click = Callable[[Any, str], Any]
Extra = Callable[[Any, SimState, Row], None]


# ---- list items and clicks ---------------------------------------------------------------------

def open_detail(g: Any, row_id: str) -> None:
    """The usual click on a row: open its detail view."""
    g.open("detail", id=row_id)


def mark_and_open(tool_name: str) -> Click:
    """A click that runs `tool_name` on the row first (e.g. marks it read), then opens its detail view."""

    def click(g: Any, row_id: str) -> None:
        g.call(tool_name, {"id": row_id})
        g.open("detail", id=row_id)

    return click


def row_item(row: Row, title: str, subtitle: str, *, click: Click = open_detail, long_press: Any = None,
             checked: bool | None = None, toggle: Any = None) -> Item:
    """A list item for `row`: clicking it runs `click(g, row id)`."""
    return (title, subtitle, lambda g, i=row["id"]: click(g, i), long_press, checked, toggle)


@dataclass(frozen=True, slots=True)
class Toggle:
    """A row's on/off `field`, set by the tool `tool` ({"id", field}) from a switch captioned
    `label`; says `on` or `off` after."""

    tool: str
    field: str
    label: str
    on: str
    off: str

    def set(self, g: Any, row_id: str, value: bool) -> str:
        """Sets the field of row `row_id` to `value`."""
        g.call(self.tool, {"id": row_id, self.field: value})
        return self.on if value else self.off

    def flip(self, row: Row) -> Callable[[Any], str]:
        """A callback that sets the opposite of the row's value as shown."""
        return lambda g, i=row["id"], v=row[self.field]: self.set(g, i, not v)

    def switch(self, b: Any, row: Row) -> None:
        """A switch named after the field, showing and flipping it."""
        b.switch(self.label, self.field, row[self.field], self.flip(row))

    def mark(self, text: str, row: Row) -> str:
        """`text`, then " · <field>" while the field is on (a list item's subtitle, e.g. "Work · pinned")."""
        return f"{text} · {self.field}" if row[self.field] else text


# ---- list and detail views ---------------------------------------------------------------------

def record_list(app: str, table: str, title: str, item: Callable[[Row], Item], *,
                search: Callable[[str, Row], bool] | None = None,
                order: Callable[[Iterable[Row]], Iterable[Row]] | None = None,
                actions: Sequence[tuple[str, str, Any]] = ()) -> Screen:
    """The list screen of `app.table`: every row (`order`ed) as `item(row)`, with a search field
    keeping the rows `search(query, row)` accepts, and the toolbar `actions`."""

    def render(b: Any, state: SimState, frame: dict[str, Any]) -> None:
        values = state.table(app, table).values()
        rows = list(values) if order is None else order(values)
        list_screen(b, frame, title, [item(r) for r in rows],
                    search=(lambda q: [item(r) for r in rows if search(q, r)]) if search else None,
                    actions=actions)

    return render


def record_detail(app: str, table: str, what: str, heading: Callable[[Row], str],
                  lines: Callable[[Row], Sequence[tuple[str, Any, str]]], extra: Extra | None = None) -> Screen:
    """The detail screen of the row with the frame's id: `heading`, `lines`, then whatever `extra`
    adds (buttons); "This <what> no longer exists." when the row is gone."""

    def render(b: Any, state: SimState, frame: dict[str, Any]) -> None:
        row = state.get(app, table, frame["params"]["id"])
        if row is None:
            return missing(b, what)
        detail_header(b, heading(row), lines(row))
        if extra is not None:
            extra(b, state, row)
        return None

    return render


def record_screens(app: str, table: str, title: str, *, row_title: Callable[[Row], str],
                   row_subtitle: Callable[[Row], str], lines: Callable[[Row], Sequence[tuple[str, Any, str]]],
                   search: Sequence[str] = (), extra: Extra | None = None,
                   order: Callable[[Row], Any] | None = None, what: str = "record",
                   ) -> dict[str, Screen]:
    """{'list', 'detail'} renderers for a plain `app.table`: rows titled `row_title` (sorted by the
    key `order`), searched in the `search` fields; `extra` adds buttons to the detail view."""
    return {
        "list": record_list(app, table, title, lambda r: row_item(r, row_title(r), row_subtitle(r)),
                            search=match_fields((), maybe=search) if search else None,
                            order=(lambda rows: sorted(rows, key=order)) if order is not None else None),
        "detail": record_detail(app, table, what, row_title, lines, extra),
    }


# ---- buttons and the edit form -----------------------------------------------------------------

def delete_button(b: Any, tool_name: str, row_id: str, done: str) -> None:
    """A "Delete" button for a detail view: calls `tool_name` on the row, goes back, says `done`."""

    def delete(g: Any, i: str = row_id) -> str:
        g.call(tool_name, {"id": i})
        g.back()
        return done

    b.button("Delete", "delete", delete)


def edit_delete_buttons(b: Any, row: Row, delete_tool: str, done: str) -> None:
    """An "Edit" button opening the row's form, then a `delete_button`."""
    b.button("Edit", "edit", lambda g, i=row["id"]: g.open("form", id=i))
    delete_button(b, delete_tool, row["id"], done)


def edit_form(app: str, table: str, noun: str, fields: Sequence[tuple[str, str]],
              arguments: Callable[[dict[str, str]], dict[str, Any]], create: str, update: str, *,
              open_created: bool = False) -> Screen:
    """The "New <noun>" form (or "Edit <noun>" for the row with the frame's id, pre-filled): Save
    calls `create` (or `update` with the id) with `arguments(field texts)`, goes back (and with
    `open_created` opens the new row), and says "<Noun> saved."."""

    def render(b: Any, state: SimState, frame: dict[str, Any]) -> None:
        row_id = frame["params"].get("id")
        row = state.get(app, table, row_id) if row_id else None

        def save(g: Any, values: dict[str, str]) -> str:
            args = arguments(values)
            if row is None:
                created = g.call(create, args)
                g.back()
                if open_created:
                    g.open("detail", id=created["id"])
            else:
                g.call(update, {"id": row["id"], **args})
                g.back()
            return f"{noun.capitalize()} saved."

        form_screen(b, frame, f"Edit {noun}" if row else f"New {noun}", fields, save, initial=row)

    return render


def editable_screens(app: str, table: str, noun: str, title: str, item: Callable[[Row], Item], *,
                     heading: Callable[[Row], str], lines: Callable[[Row], Sequence[tuple[str, Any, str]]],
                     fields: Sequence[tuple[str, str]], arguments: Callable[[dict[str, str]], dict[str, Any]],
                     create: str, update: str, delete: str, toggle: Toggle | None = None,
                     search: Callable[[str, Row], bool] | None = None,
                     order: Callable[[Iterable[Row]], Iterable[Row]] | None = None,
                     actions: Sequence[tuple[str, str, Any]] = (), open_created: bool = False,
                     ) -> dict[str, Screen]:
    """{'list', 'detail', 'form'} of an app whose `noun`s are created and edited in a form: the
    `record_list`, the `record_detail` with `toggle`'s switch (if any) and the Edit and Delete
    (`delete`, "<Noun> deleted.") buttons, and the `edit_form`."""

    def buttons(b: Any, state: SimState, row: Row) -> None:
        if toggle is not None:
            toggle.switch(b, row)
        edit_delete_buttons(b, row, delete, f"{noun.capitalize()} deleted.")

    return {
        "list": record_list(app, table, title, item, search=search, order=order, actions=actions),
        "detail": record_detail(app, table, noun, heading, lines, buttons),
        "form": edit_form(app, table, noun, fields, arguments, create, update, open_created=open_created),
    }
