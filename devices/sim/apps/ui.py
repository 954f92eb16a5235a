"""Screen patterns the apps share: a searchable list, a record's detail view and an edit form."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from devices.sim.screens import Builder

__all__ = [
    "Item",
    "back",
    "detail_header",
    "form_screen",
    "list_screen",
    "missing",
    "nonempty",
    "split_list",
]

# (title, subtitle, click, long_press, checked or None, toggle)
Item = tuple[str, str, Any, Any, "bool | None", Any]


def back(g: Any) -> None:
    g.back()


def list_screen(b: Builder, frame: dict[str, Any], title: str, items: Sequence[Item], *,
                search: Callable[[str], Sequence[Item]] | None = None,
                actions: Sequence[tuple[str, str, Any]] = (), up: bool = False) -> None:
    """Toolbar with actions, an optional live search field, then the scrollable items."""
    b.toolbar(title, back=back if up else None)
    for text, name, click in actions:
        b.action(text, name, click)
    if search is not None:
        query = frame["fields"].get("search", "")
        b.field("search", "Search", query, focused=frame["focus"] == "search")
        if query:
            items = search(query)
    if not items:
        b.label("Nothing here yet.", "empty")
        return
    b.items(list(items), frame["scroll"])


def detail_header(b: Builder, title: str, lines: Sequence[tuple[str, Any, str]]) -> None:
    """Toolbar with an up button and one label per (caption, value, resource name)."""
    b.toolbar(title, back=back)
    for caption, value, name in lines:
        text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
        b.label(f"{caption}: {text}" if caption else text, name, description=caption or None)


def missing(b: Builder, what: str) -> None:
    b.toolbar(what.title(), back=back)
    b.label(f"This {what} no longer exists.", "empty")


def form_screen(b: Builder, frame: dict[str, Any], title: str, fields: Sequence[tuple[str, str]],
                save: Callable[[Any, dict[str, str]], str | None], initial: dict[str, Any] | None = None,
                save_text: str = "Save") -> None:
    """Editable fields (pre-filled from `initial`), then Save and Cancel buttons.

    `save(g, values)` gets every field's current text (typed or initial) and
    returns a message; it raises ToolFailure to keep the form open with an error.
    """
    initial = initial or {}
    typed = frame["fields"]
    b.toolbar(title, back=back)
    values: dict[str, str] = {}
    for name, hint in fields:
        start = initial.get(name, "")
        if isinstance(start, list):
            start = ", ".join(start)
        values[name] = typed.get(name, "" if start is None else str(start))
        b.field(name, hint, values[name], focused=frame["focus"] == name)

    def on_save(g: Any) -> str | None:
        current = {name: g.fields.get(name, values[name]) for name, _ in fields}
        return save(g, current)

    b.button(save_text, "save", on_save)
    b.button("Cancel", "cancel", back)


def nonempty(values: dict[str, str]) -> dict[str, str]:
    """The fields a person actually filled in (stripped)."""
    return {k: v.strip() for k, v in values.items() if v and v.strip()}


def split_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]

