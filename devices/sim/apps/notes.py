"""The notes app: titled notes in folders, optionally pinned; its tools and screens."""

from __future__ import annotations

from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import boolean, string
from devices.sim.apps.common import match_fields, out, outs, pick_changes, require
from devices.sim.apps.crud import delete_tool, flag_tool, get_tool
from devices.sim.apps.records import Toggle, editable_screens, row_item
from devices.sim.state import SimState
from devices.sim.tools import tool

__all__ = ["DEFAULT_FOLDER", "LABEL", "ROOT", "SCREENS", "add_note"]

# Where a note goes when nobody says otherwise (what most notes apps call it).
DEFAULT_FOLDER = "Notes"
# What notes.search and the list screen's search field look in.
_TEXT = match_fields(("title", "body"))


def _sorted(rows: Any) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (not r["pinned"], r["title"]))


def _notes(state: SimState) -> list[dict[str, Any]]:
    return _sorted(state.table("notes", "notes").values())


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
    rows = _notes(state)
    if "folder" in args:
        rows = [r for r in rows if r["folder"].lower() == args["folder"].lower()]
    return outs(rows)


get_tool("notes.get", "notes", "note", "Note id, e.g. 'nt1'.")


@tool("notes.search", "Find notes whose title or text contains the query.", "Matching note records.",
      {"query": string("Text to look for.", minLength=1)})
def search(state: SimState, args: dict[str, Any]) -> Any:
    return outs(r for r in _notes(state) if _TEXT(args["query"], r))


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


flag_tool("notes.pin", "Pin or unpin a note.", "The updated note record.", "notes", "note", "Note id.",
          "pinned", boolean("True to pin."))


# ---- screens -------------------------------------------------------------------------------

LABEL = APP_LABELS["notes"]
ROOT = "list"
_PIN = Toggle("notes.pin", "pinned", "Pinned", "Pinned.", "Unpinned.")


def _form_arguments(values: dict[str, str]) -> dict[str, Any]:
    folder = values["folder"].strip()
    return {"title": values["title"].strip(), "body": values["body"], **({"folder": folder} if folder else {})}


SCREENS = editable_screens(
    "notes", "notes", "note", "Notes",
    lambda r: row_item(r, r["title"], _PIN.mark(r["folder"], r), long_press=_PIN.flip(r)),
    search=_TEXT, order=_sorted, actions=[("Add", "add", lambda g: g.open("form"))], toggle=_PIN,
    heading=lambda r: r["title"], lines=lambda r: [("", r["body"], "body"), ("Folder", r["folder"], "folder")],
    fields=[("title", "Title"), ("body", "Note"), ("folder", "Folder")], arguments=_form_arguments,
    create="notes.create", update="notes.update", delete="notes.delete", open_created=True)
