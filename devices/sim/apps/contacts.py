"""The contacts app: people with phone, email, company and a star; its tools and screens."""

from __future__ import annotations

from typing import Any

from devices.sim.apps.common import matches, out, outs, pick_changes, require
from devices.sim.state import SimState
from devices.sim.tools import BadArguments, Conflict, NotFound, boolean, string, tool

__all__ = ["PHONE", "find_contact", "resolve_phone"]

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


@tool("contacts.search", "Find contacts whose name, phone, email or company contains the query.",
      "A list of matching contact records.", {"query": string("Text to look for.", minLength=1)})
def search(state: SimState, args: dict[str, Any]) -> Any:
    q = args["query"]
    return outs(r for r in state.table("contacts", "contacts").values()
                if matches(q, r["name"], r["phone"], r["email"], r["company"]))


@tool("contacts.list", "List all contacts, optionally only starred ones.",
      "A list of contact records sorted by name.", optional={"starred": boolean("Only starred contacts.")})
def list_contacts(state: SimState, args: dict[str, Any]) -> Any:
    rows = state.table("contacts", "contacts").values()
    if args.get("starred"):
        rows = [r for r in rows if r["starred"]]
    return outs(sorted(rows, key=lambda r: r["name"]))


@tool("contacts.get", "Get one contact by id.", "The contact record.",
      {"id": string("Contact id, e.g. 'ct1'.", minLength=1)})
def get(state: SimState, args: dict[str, Any]) -> Any:
    return out(require(state, "contacts", "contacts", args["id"], "contact"))


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


@tool("contacts.update", "Change fields of a contact.", "The updated contact record.",
      {"id": string("Contact id.", minLength=1)},
      {"name": string("New name.", minLength=1), "phone": string("New phone.", pattern=PHONE),
       "email": string("New email.", pattern=r"[^@\s]+@[^@\s]+\.[^@\s]+"),
       "company": string("New company."), "starred": boolean("Starred or not.")})
def update(state: SimState, args: dict[str, Any]) -> Any:
    require(state, "contacts", "contacts", args["id"], "contact")
    return out(state.update("contacts", "contacts", args["id"], pick_changes(args, _FIELDS)))


@tool("contacts.delete", "Delete a contact.", "The deleted contact record.",
      {"id": string("Contact id.", minLength=1)})
def delete(state: SimState, args: dict[str, Any]) -> Any:
    require(state, "contacts", "contacts", args["id"], "contact")
    return out(state.delete("contacts", "contacts", args["id"]))


@tool("contacts.star", "Star or unstar a contact.", "The updated contact record.",
      {"id": string("Contact id.", minLength=1), "starred": boolean("True to star, false to unstar.")})
def star(state: SimState, args: dict[str, Any]) -> Any:
    require(state, "contacts", "contacts", args["id"], "contact")
    return out(state.update("contacts", "contacts", args["id"], {"starred": args["starred"]}))


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
