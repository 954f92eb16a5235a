"""The files app: photos, documents and recordings in albums, with tags; its tools and screens."""

from __future__ import annotations

from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import string
from devices.sim.apps.common import match_fields, out, require, sort_by
from devices.sim.apps.contacts import find_contact
from devices.sim.apps.crud import delete_tool, get_tool, list_tool, search_tool
from devices.sim.apps.messages import send_message
from devices.sim.apps.records import delete_button, record_detail, record_list, row_item
from devices.sim.state import SimState
from devices.sim.tools import NotFound, tool

__all__ = ["KINDS", "LABEL", "ROOT", "SCREENS"]

KINDS = ["photo", "document", "audio"]
_ID = {"id": string("File id, e.g. 'f1'.", minLength=1)}
_newest = sort_by("created_at", "id", reverse=True)
# What files.search and the list screen's search field look in.
_TEXT = match_fields(("name", "album", "tags"))


def _of_kind(row: dict[str, Any], args: dict[str, Any]) -> bool:
    return "kind" not in args or row["kind"] == args["kind"]


search_tool("files.search", "Find files by name, album or tag.", "File records, newest first.", "files", _TEXT,
            where=_of_kind, order=_newest, optional={"kind": string("Only this kind.", enum=KINDS)})


list_tool("files.list", "List files, optionally in one album or of one kind.", "File records, newest first.",
          "files", order=_newest,
          where=lambda r, args: ("album" not in args or r["album"].lower() == args["album"].lower())
          and _of_kind(r, args),
          optional={"album": string("Album name.", minLength=1), "kind": string("Kind.", enum=KINDS)})


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
SCREENS = {
    "list": record_list("files", "files", "Files",
                        lambda r: row_item(r, r["name"], f"{r['album']} · {r['kind']} · {r['size_kb']} KB"),
                        search=_TEXT, order=_newest),
    "detail": record_detail(
        "files", "files", "file", lambda r: r["name"],
        lambda r: [("Album", r["album"], "album"), ("Tags", r["tags"] or "none", "tags"),
                   ("Size", f"{r['size_kb']} KB", "size"), ("Created", r["created_at"], "created")],
        lambda b, state, r: delete_button(b, "files.delete", r["id"], "File deleted.")),
}
