"""The messages app: SMS threads with contacts; its tools and screens."""

from __future__ import annotations

from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import string
from devices.sim.apps.common import matches, now_iso, out, outs
from devices.sim.apps.contacts import PHONE, resolve_phone
from devices.sim.apps.records import change_tool, delete_button, delete_tool, get_tool
from devices.sim.apps.ui import detail_header, form_screen, list_screen, missing
from devices.sim.state import SimState
from devices.sim.tools import tool

__all__ = ["LABEL", "ROOT", "SCREENS", "send_message"]


def send_message(state: SimState, contact: str, phone: str, body: str) -> dict[str, Any]:
    """Stores an outgoing message (also used by files.share and skills)."""
    row = {"id": state.new_id("messages", "messages"), "contact": contact, "phone": phone,
           "direction": "out", "body": body, "sent_at": now_iso(state), "read": True}
    return state.put("messages", "messages", row)


@tool("messages.send", "Send a text message to a contact (by name) or a phone number.",
      "The sent message record.", {"body": string("Message text.", minLength=1)},
      {"contact": string("Contact name.", minLength=1), "phone": string("Phone number.", pattern=PHONE)})
def send(state: SimState, args: dict[str, Any]) -> Any:
    contact, phone = resolve_phone(state, args)
    return out(send_message(state, contact, phone, args["body"]))


@tool("messages.list", "List messages, newest first, optionally with one contact only.",
      "Message records.", optional={"contact": string("Contact name.", minLength=1),
                                    "unread": {"type": "boolean", "description": "Only unread."}})
def list_messages(state: SimState, args: dict[str, Any]) -> Any:
    rows = list(state.table("messages", "messages").values())
    if "contact" in args:
        rows = [r for r in rows if r["contact"].lower() == args["contact"].lower()]
    if args.get("unread"):
        rows = [r for r in rows if not r["read"]]
    return outs(sorted(rows, key=lambda r: (r["sent_at"], r["id"]), reverse=True))


@tool("messages.search", "Find messages whose text or contact contains the query.",
      "Matching message records.", {"query": string("Text to look for.", minLength=1)})
def search(state: SimState, args: dict[str, Any]) -> Any:
    return outs(r for r in state.table("messages", "messages").values()
                if matches(args["query"], r["body"], r["contact"], r["phone"]))


get_tool("messages.get", "messages", "message", "Message id, e.g. 'msg1'.")


change_tool("messages.mark_read", "Mark a message as read.", "The updated message record.", "messages",
            "message", "Message id.", lambda args: {"read": True})


delete_tool("messages.delete", "Delete a message.", "The deleted message record.",
            "messages", "message", "Message id.")


# ---- screens -------------------------------------------------------------------------------

LABEL = APP_LABELS["messages"]
ROOT = "list"


def _open(g: Any, row_id: str) -> None:
    g.call("messages.mark_read", {"id": row_id})
    g.open("detail", id=row_id)


def _item(row: dict[str, Any]) -> tuple:
    who = row["contact"] if row["direction"] == "in" else f"To {row['contact']}"
    unread = "" if row["read"] else " · unread"
    return (who, f"{row['body']}{unread}", lambda g, i=row["id"]: _open(g, i), None, None, None)


def _list(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    rows = sorted(state.table("messages", "messages").values(), key=lambda r: (r["sent_at"], r["id"]),
                  reverse=True)
    list_screen(b, frame, "Messages", [_item(r) for r in rows],
                search=lambda q: [_item(r) for r in rows if matches(q, r["body"], r["contact"], r["phone"])],
                actions=[("Compose", "compose", lambda g: g.open("compose"))])


def _detail(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    row = state.get("messages", "messages", frame["params"]["id"])
    if row is None:
        return missing(b, "message")
    detail_header(b, row["contact"], [("", row["body"], "body"), ("Phone", row["phone"], "phone"),
                                      ("Sent", row["sent_at"].replace("T", " "), "sent_at")])
    b.button("Reply", "reply", lambda g, c=row["contact"]: g.open("compose", to=c))
    delete_button(b, "messages.delete", row["id"], "Message deleted.")


def _compose(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    def save(g: Any, values: dict[str, str]) -> str:
        to = values["to"].strip()
        target = {"phone": to} if to[:1] in "+0123456789" and to else {"contact": to}
        g.call("messages.send", {**target, "body": values["body"]})
        g.back()
        return "Message sent."

    form_screen(b, frame, "New message", [("to", "To (name or number)"), ("body", "Message")], save,
                initial={"to": frame["params"].get("to", "")}, save_text="Send")


SCREENS = {"list": _list, "detail": _detail, "compose": _compose}
