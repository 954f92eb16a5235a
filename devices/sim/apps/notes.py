"""The notes app: titled notes in folders, optionally pinned; its tools and screens."""

from __future__ import annotations

from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import boolean, string
from devices.sim.apps.common import matches, out, outs, pick_changes, require
from devices.sim.apps.records import change_tool, delete_button, delete_tool, get_tool
from devices.sim.apps.ui import detail_header, form_screen, list_screen, missing
from devices.sim.state import SimState
from devices.sim.tools import tool

__all__ = ["DEFAULT_FOLDER", "LABEL", "ROOT", "SCREENS", "add_note"]

# Where a note goes when nobody says otherwise (what most notes apps call it).
DEFAULT_FOLDER = "Notes"


def _sorted(state: SimState) -> list[dict[str, Any]]:
    return sorted(state.table("notes", "notes").values(), key=lambda r: (not r["pinned"], r["title"]))


def add_note(state: SimState, title: str, body: str, folder: str = DEFAULT_FOLDER) -> dict[str, Any]:
    row = {"id": state.new_id("notes", "notes"), "title": title, "body": body,
           "folder": folder or DEFAULT_FOLDER, "pinned": False}
    return state.put("notes", "notes", row)


@tool("notes.create", "Create a note.", "The new note record.",
      {"title": string("Title.", minLength=1), "body": string("Text of the note.")},
      {"folder": string("Folder name.", minLength=1)})
def create(state: SimState, args: dict[str, Any]) -> Any:
    return out(add_note(state, args["title"], args["body"], args.get("folder", DEFAULT_FOLDER)))


@tool("notes.list", "List notes (pinned first), optionally in one folder.", "Note records.",
      optional={"folder": string("Folder name.", minLength=1)})
def list_notes(state: SimState, args: dict[str, Any]) -> Any:
    rows = _sorted(state)
    if "folder" in args:
        rows = [r for r in rows if r["folder"].lower() == args["folder"].lower()]
    return outs(rows)


get_tool("notes.get", "notes", "note", "Note id, e.g. 'nt1'.")


@tool("notes.search", "Find notes whose title or text contains the query.", "Matching note records.",
      {"query": string("Text to look for.", minLength=1)})
def search(state: SimState, args: dict[str, Any]) -> Any:
    return outs(r for r in _sorted(state) if matches(args["query"], r["title"], r["body"]))


@tool("notes.update", "Change a note's title, text or folder.", "The updated note record.",
      {"id": string("Note id.", minLength=1)},
      {"title": string("New title.", minLength=1), "body": string("New text."),
       "folder": string("New folder.", minLength=1), "append": string("Text to add at the end.")})
def update(state: SimState, args: dict[str, Any]) -> Any:
    row = require(state, "notes", "notes", args["id"], "note")
    changes = {k: args[k] for k in ("title", "body", "folder") if k in args}
    if "append" in args:
        base = changes.get("body", row["body"])
        changes["body"] = f"{base}\n{args['append']}" if base else args["append"]
    return out(state.update("notes", "notes", args["id"], changes or pick_changes(args, ("title", "body", "folder", "append"))))


delete_tool("notes.delete", "Delete a note.", "The deleted note record.", "notes", "note", "Note id.")


change_tool("notes.pin", "Pin or unpin a note.", "The updated note record.", "notes", "note", "Note id.",
            lambda args: {"pinned": args["pinned"]}, {"pinned": boolean("True to pin.")})


# ---- screens -------------------------------------------------------------------------------

LABEL = APP_LABELS["notes"]
ROOT = "list"


def _pin(g: Any, row_id: str, pinned: bool) -> str:
    g.call("notes.pin", {"id": row_id, "pinned": pinned})
    return "Pinned." if pinned else "Unpinned."


def _item(row: dict[str, Any]) -> tuple:
    subtitle = f"{row['folder']} · pinned" if row["pinned"] else row["folder"]
    return (row["title"], subtitle, lambda g, i=row["id"]: g.open("detail", id=i),
            lambda g, i=row["id"], p=row["pinned"]: _pin(g, i, not p), None, None)


def _list(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    rows = _sorted(state)
    list_screen(b, frame, "Notes", [_item(r) for r in rows],
                search=lambda q: [_item(r) for r in rows if matches(q, r["title"], r["body"])],
                actions=[("Add", "add", lambda g: g.open("form"))])


def _detail(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    row = state.get("notes", "notes", frame["params"]["id"])
    if row is None:
        return missing(b, "note")
    detail_header(b, row["title"], [("", row["body"], "body"), ("Folder", row["folder"], "folder")])
    b.switch("Pinned", "pinned", row["pinned"], lambda g, i=row["id"], p=row["pinned"]: _pin(g, i, not p))
    b.button("Edit", "edit", lambda g, i=row["id"]: g.open("form", id=i))
    delete_button(b, "notes.delete", row["id"], "Note deleted.")


def _form(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    row_id = frame["params"].get("id")
    row = state.get("notes", "notes", row_id) if row_id else None

    def save(g: Any, values: dict[str, str]) -> str:
        title, body, folder = values["title"].strip(), values["body"], values["folder"].strip()
        if row is None:
            created = g.call("notes.create", {"title": title, "body": body,
                                              **({"folder": folder} if folder else {})})
            g.back()
            g.open("detail", id=created["id"])
        else:
            g.call("notes.update", {"id": row["id"], "title": title, "body": body,
                                    **({"folder": folder} if folder else {})})
            g.back()
        return "Note saved."

    form_screen(b, frame, "Edit note" if row else "New note",
                [("title", "Title"), ("body", "Note"), ("folder", "Folder")], save, initial=row)


SCREENS = {"list": _list, "detail": _detail, "form": _form}
