"""The contacts app: people with phone, email, company and a star; its tools and screens."""

from __future__ import annotations

from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import boolean, string
from devices.sim.apps.common import matches, out, outs, pick_changes
from devices.sim.apps.records import change_tool, delete_button, delete_tool, get_tool
from devices.sim.apps.ui import detail_header, form_screen, list_screen, missing, nonempty
from devices.sim.state import SimState
from devices.sim.tools import BadArguments, Conflict, NotFound, tool

__all__ = ["LABEL", "PHONE", "ROOT", "SCREENS", "find_contact", "resolve_phone"]

# Digits with optional +, spaces, dashes, dots and parentheses: what people type as a number.
PHONE = r"\+?[0-9][0-9 ().-]{2,24}"
_FIELDS = ("name", "phone", "email", "company", "starred")


def find_contact(state: SimState, name_or_phone: str) -> dict[str, Any] | None:
    """The contact whose name (case-insensitive) or phone matches exactly, else None."""
    key = name_or_phone.strip().lower()
    for row in state.table("contacts", "contacts").values():
        if row["name"].lower() == key or row["phone"] == name_or_phone:
            return row
    return None


@tool("contacts.search", "Find contacts whose name, phone, email, company, city or relation to me "
      "(e.g. 'sister') contains the query.",
      "A list of matching contact records.", {"query": string("Text to look for.", minLength=1)})
def search(state: SimState, args: dict[str, Any]) -> Any:
    q = args["query"]
    return outs(r for r in state.table("contacts", "contacts").values()
                if matches(q, r["name"], r["phone"], r["email"], r["company"], r.get("relation"),
                           r.get("city")))


@tool("contacts.list", "List all contacts, optionally only starred ones.",
      "A list of contact records sorted by name.", optional={"starred": boolean("Only starred contacts.")})
def list_contacts(state: SimState, args: dict[str, Any]) -> Any:
    rows = state.table("contacts", "contacts").values()
    if args.get("starred"):
        rows = [r for r in rows if r["starred"]]
    return outs(sorted(rows, key=lambda r: r["name"]))


get_tool("contacts.get", "contacts", "contact", "Contact id, e.g. 'ct1'.")


@tool("contacts.add", "Add a new contact.", "The new contact record with its id.",
      {"name": string("Full name.", minLength=1), "phone": string("Phone number.", pattern=PHONE)},
      {"email": string("Email address.", pattern=r"[^@\s]+@[^@\s]+\.[^@\s]+"),
       "company": string("Company name."), "starred": boolean("Star the contact.")})
def add(state: SimState, args: dict[str, Any]) -> Any:
    if find_contact(state, args["name"]) is not None:
        raise Conflict(f"A contact named '{args['name']}' already exists; update it instead.")
    row = {"id": state.new_id("contacts", "contacts"), "name": args["name"].strip(),
           "phone": args["phone"], "email": args.get("email", ""),
           "company": args.get("company", ""), "starred": args.get("starred", False)}
    return out(state.put("contacts", "contacts", row))


change_tool("contacts.update", "Change fields of a contact.", "The updated contact record.", "contacts", "contact",
            "Contact id.", lambda args: pick_changes(args, _FIELDS),
            optional={"name": string("New name.", minLength=1), "phone": string("New phone.", pattern=PHONE),
                      "email": string("New email.", pattern=r"[^@\s]+@[^@\s]+\.[^@\s]+"),
                      "company": string("New company."), "starred": boolean("Starred or not.")})


delete_tool("contacts.delete", "Delete a contact.", "The deleted contact record.",
            "contacts", "contact", "Contact id.")


change_tool("contacts.star", "Star or unstar a contact.", "The updated contact record.", "contacts", "contact",
            "Contact id.", lambda args: {"starred": args["starred"]},
            {"starred": boolean("True to star, false to unstar.")})


def resolve_phone(state: SimState, args: dict[str, Any]) -> tuple[str, str]:
    """(contact name, phone) from `contact` and/or `phone` arguments; BadArguments if neither."""
    if "contact" in args:
        row = find_contact(state, args["contact"])
        if row is None:
            raise NotFound(f"There is no contact named '{args['contact']}'.")
        return row["name"], row["phone"]
    if "phone" in args:
        row = find_contact(state, args["phone"])
        return (row["name"] if row else args["phone"]), args["phone"]
    raise BadArguments("Give either argument 'contact' or argument 'phone'.")


# ---- screens -------------------------------------------------------------------------------

LABEL = APP_LABELS["contacts"]
ROOT = "list"


def _item(row: dict[str, Any]) -> tuple:
    subtitle = f"{row['phone']} · starred" if row["starred"] else row["phone"]
    return (row["name"], subtitle, lambda g, i=row["id"]: g.open("detail", id=i),
            lambda g, i=row["id"], s=row["starred"]: _star_message(g, i, not s), None, None)


def _star_message(g: Any, row_id: str, starred: bool) -> str:
    g.call("contacts.star", {"id": row_id, "starred": starred})
    return "Starred." if starred else "Unstarred."


def _list(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    rows = sorted(state.table("contacts", "contacts").values(), key=lambda r: r["name"])
    list_screen(b, frame, "Contacts", [_item(r) for r in rows],
                search=lambda q: [_item(r) for r in rows
                                  if matches(q, r["name"], r["phone"], r["email"], r["company"])],
                actions=[("Add", "add", lambda g: g.open("form"))])


def _detail(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    row = state.get("contacts", "contacts", frame["params"]["id"])
    if row is None:
        return missing(b, "contact")
    detail_header(b, row["name"], [("Phone", row["phone"], "phone"), ("Email", row["email"], "email"),
                                   ("Company", row["company"], "company")])
    b.switch("Starred", "starred", row["starred"],
             lambda g, i=row["id"], s=row["starred"]: _star_message(g, i, not s))
    b.button("Edit", "edit", lambda g, i=row["id"]: g.open("form", id=i))
    delete_button(b, "contacts.delete", row["id"], "Contact deleted.")


def _form(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    row_id = frame["params"].get("id")
    row = state.get("contacts", "contacts", row_id) if row_id else None

    def save(g: Any, values: dict[str, str]) -> str:
        filled = nonempty(values)
        if row is None:
            created = g.call("contacts.add", filled)
            g.back()
            g.open("detail", id=created["id"])
            return "Contact saved."
        g.call("contacts.update", {"id": row["id"], **filled})
        g.back()
        return "Contact saved."

    form_screen(b, frame, "Edit contact" if row else "New contact",
                [("name", "Name"), ("phone", "Phone"), ("email", "Email"), ("company", "Company")],
                save, initial=row)


SCREENS = {"list": _list, "detail": _detail, "form": _form}
