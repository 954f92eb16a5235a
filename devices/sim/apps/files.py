"""The files app: photos, documents and recordings in albums, with tags; its tools and screens."""

from __future__ import annotations

from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import string
from devices.sim.apps.common import matches, out, outs, require
from devices.sim.apps.contacts import find_contact
from devices.sim.apps.messages import send_message
from devices.sim.apps.records import delete_button, delete_tool, get_tool
from devices.sim.apps.ui import detail_header, list_screen, missing
from devices.sim.state import SimState
from devices.sim.tools import NotFound, tool

__all__ = ["KINDS", "LABEL", "ROOT", "SCREENS"]

KINDS = ["photo", "document", "audio"]
_ID = {"id": string("File id, e.g. 'f1'.", minLength=1)}


def _newest(rows: Any) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (r["created_at"], r["id"]), reverse=True)


@tool("files.search", "Find files by name, album or tag.", "File records, newest first.",
      {"query": string("Text to look for.", minLength=1)}, {"kind": string("Only this kind.", enum=KINDS)})
def search(state: SimState, args: dict[str, Any]) -> Any:
    return outs(_newest(r for r in state.table("files", "files").values()
                        if matches(args["query"], r["name"], r["album"], r["tags"])
                        and ("kind" not in args or r["kind"] == args["kind"])))


@tool("files.list", "List files, optionally in one album or of one kind.", "File records, newest first.",
      optional={"album": string("Album name.", minLength=1), "kind": string("Kind.", enum=KINDS)})
def list_files(state: SimState, args: dict[str, Any]) -> Any:
    return outs(_newest(r for r in state.table("files", "files").values()
                        if ("album" not in args or r["album"].lower() == args["album"].lower())
                        and ("kind" not in args or r["kind"] == args["kind"])))


get_tool("files.get", "files", "file", _ID)


@tool("files.tag", "Add a tag to a file.", "The updated file record.",
      {**_ID, "tag": string("Tag text.", minLength=1)})
def tag(state: SimState, args: dict[str, Any]) -> Any:
    row = require(state, "files", "files", args["id"], "file")
    tags = row["tags"] if args["tag"] in row["tags"] else [*row["tags"], args["tag"]]
    return out(state.update("files", "files", args["id"], {"tags": tags}))


@tool("files.untag", "Remove a tag from a file.", "The updated file record.",
      {**_ID, "tag": string("Tag text.", minLength=1)})
def untag(state: SimState, args: dict[str, Any]) -> Any:
    row = require(state, "files", "files", args["id"], "file")
    if args["tag"] not in row["tags"]:
        raise NotFound(f"File '{args['id']}' has no tag '{args['tag']}'.")
    return out(state.update("files", "files", args["id"],
                            {"tags": [t for t in row["tags"] if t != args["tag"]]}))


@tool("files.move", "Move a file to another album.", "The updated file record.",
      {**_ID, "album": string("Target album.", minLength=1)})
def move(state: SimState, args: dict[str, Any]) -> Any:
    row = require(state, "files", "files", args["id"], "file")
    return out(state.update("files", "files", args["id"], {
        "album": args["album"], "path": f"/sdcard/{args['album']}/{row['name']}"}))


delete_tool("files.delete", "Delete a file.", "The deleted file record.", "files", "file", _ID)


@tool("files.share", "Share a file with a contact by message.", "The message record that carried it.",
      {**_ID, "contact": string("Contact name.", minLength=1)})
def share(state: SimState, args: dict[str, Any]) -> Any:
    row = require(state, "files", "files", args["id"], "file")
    person = find_contact(state, args["contact"])
    if person is None:
        raise NotFound(f"There is no contact named '{args['contact']}'.")
    return out(send_message(state, person["name"], person["phone"], f"[file] {row['name']}"))


# ---- screens -------------------------------------------------------------------------------

LABEL = APP_LABELS["files"]
ROOT = "list"


def _item(row: dict[str, Any]) -> tuple:
    return (row["name"], f"{row['album']} · {row['kind']} · {row['size_kb']} KB",
            lambda g, i=row["id"]: g.open("detail", id=i), None, None, None)


def _list(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    rows = _newest(state.table("files", "files").values())
    list_screen(b, frame, "Files", [_item(r) for r in rows],
                search=lambda q: [_item(r) for r in rows if matches(q, r["name"], r["album"], r["tags"])])


def _detail(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    row = state.get("files", "files", frame["params"]["id"])
    if row is None:
        return missing(b, "file")
    detail_header(b, row["name"], [("Album", row["album"], "album"), ("Tags", row["tags"] or "none", "tags"),
                                   ("Size", f"{row['size_kb']} KB", "size"), ("Created", row["created_at"], "created")])
    delete_button(b, "files.delete", row["id"], "File deleted.")


SCREENS = {"list": _list, "detail": _detail}
