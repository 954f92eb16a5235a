"""The email app: folders of messages with sender, recipients and subject; its tools and screens."""

from __future__ import annotations

from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import array, boolean, string
from devices.sim.apps.common import match_fields, now_iso, out, outs, require, sort_by
from devices.sim.apps.crud import change_tool, list_tool
from devices.sim.apps.records import Toggle, mark_and_open, record_detail, row_item
from devices.sim.apps.ui import form_screen, list_screen, split_list
from devices.sim.state import SimState
from devices.sim.tools import Conflict, tool

__all__ = ["FOLDERS", "LABEL", "ME", "ROOT", "SCREENS"]

FOLDERS = ["inbox", "sent", "drafts", "archive", "trash"]
# The phone owner's address, the sender of every outgoing email.
ME = "me@example.com"
_ADDRESS = string("Email address.", pattern=r"[^@\s]+@[^@\s]+\.[^@\s]+")
_ID = {"id": string("Email id, e.g. 'em1'.", minLength=1)}


def _new(state: SimState, folder: str, to: list[str], subject: str, body: str) -> dict[str, Any]:
    row = {"id": state.new_id("email", "emails"), "folder": folder, "sender": ME, "to": list(to),
           "subject": subject, "body": body, "received_at": now_iso(state), "read": True,
           "starred": False}
    return state.put("email", "emails", row)


_newest = sort_by("received_at", "id", reverse=True)
# What email.search and the list screen's search field look in.
_TEXT = match_fields(("subject", "body", "sender", "to"))


@tool("email.send", "Send an email.", "The sent email record (folder 'sent').",
      {"to": array(_ADDRESS, "Recipients.", minItems=1), "subject": string("Subject.", minLength=1),
       "body": string("Text.")})
def send(state: SimState, args: dict[str, Any]) -> Any:
    return out(_new(state, "sent", args["to"], args["subject"], args["body"]))


@tool("email.draft", "Save an email as a draft without sending it.", "The draft record.",
      {"subject": string("Subject.", minLength=1)},
      {"to": array(_ADDRESS, "Recipients."), "body": string("Text.")})
def draft(state: SimState, args: dict[str, Any]) -> Any:
    return out(_new(state, "drafts", args.get("to", []), args["subject"], args.get("body", "")))


list_tool("email.list", "List the emails in a folder, newest first.", "Email records.", "emails", order=_newest,
          where=lambda r, args: r["folder"] == args.get("folder", "inbox") and (not args.get("unread") or not r["read"]),
          optional={"folder": string("Folder (default inbox).", enum=FOLDERS),
                    "unread": boolean("Only unread emails.")})


@tool("email.search", "Find emails whose subject, text, sender or recipients contain the query.",
      "Matching email records.", {"query": string("Text to look for.", minLength=1)},
      {"folder": string("Only this folder.", enum=FOLDERS)})
def search(state: SimState, args: dict[str, Any]) -> Any:
    folder = args.get("folder")
    return outs(_newest(r for r in state.table("email", "emails").values()
                        if (folder is None or r["folder"] == folder)
                        and _TEXT(args["query"], r)))


change_tool("email.read", "Open an email (marks it read).", "The email record.", "emails", "email", _ID,
            lambda args: {"read": True})


change_tool("email.move", "Move an email to another folder.", "The updated email record.", "emails", "email", _ID,
            lambda args: {"folder": args["folder"]}, {"folder": string("Target folder.", enum=FOLDERS)})


change_tool("email.star", "Star or unstar an email.", "The updated email record.", "emails", "email", _ID,
            lambda args: {"starred": args.get("starred", True)},
            optional={"starred": boolean("True to star (default), false to unstar.")})


@tool("email.reply", "Reply to an email's sender.", "The sent reply record.",
      {**_ID, "body": string("Reply text.", minLength=1)})
def reply(state: SimState, args: dict[str, Any]) -> Any:
    row = require(state, "email", "emails", args["id"], "email")
    if row["sender"] == ME:
        raise Conflict(f"Email '{args['id']}' was sent by you; use email.send to write again.")
    subject = row["subject"] if row["subject"].startswith("Re: ") else f"Re: {row['subject']}"
    return out(_new(state, "sent", [row["sender"]], subject, args["body"]))


change_tool("email.delete", "Move an email to the trash.", "The updated email record.", "emails", "email", _ID,
            lambda args: {"folder": "trash"})


# ---- screens -------------------------------------------------------------------------------

LABEL = APP_LABELS["email"]
ROOT = "list"
_STAR = Toggle("email.star", "starred", "Starred", "Starred.", "Unstarred.")
_OPEN = mark_and_open("email.read")


def _item(row: dict[str, Any]) -> tuple:
    who = row["sender"] if row["sender"] != ME else f"To {', '.join(row['to'])}"
    flags = ("" if row["read"] else " · unread") + (" · starred" if row["starred"] else "")
    return row_item(row, row["subject"], f"{who}{flags}", click=_OPEN,
                    long_press=_STAR.flip(row))


def _list(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    folder = frame["params"].get("folder", "inbox")
    rows = _newest(r for r in state.table("email", "emails").values() if r["folder"] == folder)
    list_screen(b, frame, folder.title(), [_item(r) for r in rows], up=folder != "inbox",
                search=lambda q: [_item(r) for r in rows if _TEXT(q, r)],
                actions=[("Compose", "compose", lambda g: g.open("compose")),
                         ("Folders", "folders", lambda g: g.open("folders"))])


def _folders(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    counts = {f: 0 for f in FOLDERS}
    for r in state.table("email", "emails").values():
        counts[r["folder"]] = counts.get(r["folder"], 0) + 1
    items = [(f.title(), f"{counts[f]} emails", lambda g, f=f: g.open("list", folder=f), None, None, None)
             for f in FOLDERS]
    list_screen(b, frame, "Folders", items, up=True)


def _buttons(b: Any, state: SimState, row: dict[str, Any]) -> None:
    _STAR.switch(b, row)
    if row["sender"] != ME:
        b.button("Reply", "reply", lambda g, i=row["id"]: g.open("reply", id=i))

    def move(folder: str, message: str) -> Any:
        def run(g: Any, i: str = row["id"]) -> str:
            g.call("email.move", {"id": i, "folder": folder})
            g.back()
            return message
        return run

    b.button("Archive", "archive", move("archive", "Archived."))
    b.button("Delete", "delete", move("trash", "Moved to trash."))


def _compose(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    def save(g: Any, values: dict[str, str]) -> str:
        g.call("email.send", {"to": split_list(values["to"]), "subject": values["subject"].strip(),
                              "body": values["body"]})
        g.back()
        return "Email sent."

    form_screen(b, frame, "Compose", [("to", "To"), ("subject", "Subject"), ("body", "Message")], save,
                save_text="Send")


def _reply(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    def save(g: Any, values: dict[str, str]) -> str:
        g.call("email.reply", {"id": frame["params"]["id"], "body": values["body"]})
        g.back()
        return "Reply sent."

    form_screen(b, frame, "Reply", [("body", "Message")], save, save_text="Send")


SCREENS = {
    "list": _list,
    "folders": _folders,
    "detail": record_detail("email", "emails", "email", lambda r: r["subject"],
                            lambda r: [("From", r["sender"], "sender"), ("To", r["to"], "to"), ("", r["body"], "body")],
                            _buttons),
    "compose": _compose,
    "reply": _reply,
}
