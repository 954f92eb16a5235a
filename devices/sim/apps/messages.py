"""The messages app: SMS threads with contacts; its tools and screens."""

from __future__ import annotations

from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import string
from devices.sim.apps.common import match_fields, now_iso, out, sort_by
from devices.sim.apps.contacts import PHONE, resolve_phone
from devices.sim.apps.crud import change_tool, delete_tool, get_tool, list_tool, search_tool
from devices.sim.apps.records import (
    delete_button,
    mark_and_open,
    record_detail,
    record_list,
    row_item,
)
from devices.sim.apps.ui import form_screen
from devices.sim.state import SimState
from devices.sim.tools import tool

__all__ = ["LABEL", "ROOT", "SCREENS", "send_message"]

_newest = sort_by("sent_at", "id", reverse=True)
# What messages.search and the list screen's search field look in.
_TEXT = match_fields(("body", "contact", "phone"))


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


list_tool("messages.list", "List messages, newest first, optionally with one contact only.",
          "Message records.", "messages", order=_newest,
          where=lambda r, args: ("contact" not in args or r["contact"].lower() == args["contact"].lower())
          and (not args.get("unread") or not r["read"]),
          optional={"contact": string("Contact name.", minLength=1),
                    "unread": {"type": "boolean", "description": "Only unread."}})


search_tool("messages.search", "Find messages whose text or contact contains the query.",
            "Matching message records.", "messages", _TEXT)


get_tool("messages.get", "messages", "message", "Message id, e.g. 'msg1'.")


change_tool("messages.mark_read", "Mark a message as read.", "The updated message record.", "messages",
            "message", "Message id.", lambda args: {"read": True})


delete_tool("messages.delete", "Delete a message.", "The deleted message record.",
            "messages", "message", "Message id.")


# ---- screens -------------------------------------------------------------------------------

LABEL = APP_LABELS["messages"]
ROOT = "list"
_OPEN = mark_and_open("messages.mark_read")


def _item(row: dict[str, Any]) -> tuple:
    who = row["contact"] if row["direction"] == "in" else f"To {row['contact']}"
    unread = "" if row["read"] else " · unread"
    return row_item(row, who, f"{row['body']}{unread}", click=_OPEN)


def _buttons(b: Any, state: SimState, row: dict[str, Any]) -> None:
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


SCREENS = {
    "list": record_list("messages", "messages", "Messages", _item, search=_TEXT, order=_newest,
                        actions=[("Compose", "compose", lambda g: g.open("compose"))]),
    "detail": record_detail("messages", "messages", "message", lambda r: r["contact"],
                            lambda r: [("", r["body"], "body"), ("Phone", r["phone"], "phone"),
                                       ("Sent", r["sent_at"].replace("T", " "), "sent_at")], _buttons),
    "compose": _compose,
}
