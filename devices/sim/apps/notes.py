"""The notes app: titled notes in folders, optionally pinned; its tools and screens."""

from __future__ import annotations

from typing import Any

from devices.sim.apps.common import matches, out, outs, pick_changes, require
from devices.sim.state import SimState
from devices.sim.tools import boolean, string, tool

__all__ = ["DEFAULT_FOLDER", "add_note"]

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


@tool("notes.get", "Get one note by id.", "The note record.",
      {"id": string("Note id, e.g. 'nt1'.", minLength=1)})
def get(state: SimState, args: dict[str, Any]) -> Any:
    return out(require(state, "notes", "notes", args["id"], "note"))


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


@tool("notes.delete", "Delete a note.", "The deleted note record.",
      {"id": string("Note id.", minLength=1)})
def delete(state: SimState, args: dict[str, Any]) -> Any:
    require(state, "notes", "notes", args["id"], "note")
    return out(state.delete("notes", "notes", args["id"]))


@tool("notes.pin", "Pin or unpin a note.", "The updated note record.",
      {"id": string("Note id.", minLength=1), "pinned": boolean("True to pin.")})
def pin(state: SimState, args: dict[str, Any]) -> Any:
    require(state, "notes", "notes", args["id"], "note")
    return out(state.update("notes", "notes", args["id"], {"pinned": args["pinned"]}))
