"""The contacts app: people with phone, email, company and a star; its tools and screens."""

from __future__ import annotations

from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import boolean, string
from devices.sim.apps.common import find_named, match_fields, out, sort_by
from devices.sim.apps.crud import (
    delete_tool,
    flag_tool,
    get_tool,
    list_tool,
    search_tool,
    update_tool,
)
from devices.sim.apps.records import Toggle, editable_screens, row_item
from devices.sim.apps.ui import nonempty
from devices.sim.state import SimState
from devices.sim.tools import BadArguments, Conflict, NotFound, tool

__all__ = ["LABEL", "PHONE", "ROOT", "SCREENS", "find_contact", "resolve_phone"]

# Digits with optional +, spaces, dashes, dots and parentheses: what people type as a number.
PHONE = r"\+?[0-9][0-9 ().-]{2,24}"
_EMAIL = r"[^@\s]+@[^@\s]+\.[^@\s]+"
_by_name = sort_by("name")


def find_contact(state: SimState, name_or_phone: str) -> dict[str, Any] | None:
    """The contact whose name (case-insensitive) or phone matches exactly, else None."""
    return find_named(state, "contacts", "contacts", name_or_phone, alt="phone")


search_tool("contacts.search", "Find contacts whose name, phone, email, company, city or relation to me "
            "(e.g. 'sister') contains the query.", "A list of matching contact records.", "contacts",
            match_fields(("name", "phone", "email", "company"), maybe=("relation", "city")))


list_tool("contacts.list", "List all contacts, optionally only starred ones.",
          "A list of contact records sorted by name.", "contacts", order=_by_name,
          where=lambda r, args: not args.get("starred") or r["starred"],
          optional={"starred": boolean("Only starred contacts.")})


get_tool("contacts.get", "contacts", "contact", "Contact id, e.g. 'ct1'.")


@tool("contacts.add", "Add a new contact.", "The new contact record with its id.",
      {"name": string("Full name.", minLength=1), "phone": string("Phone number.", pattern=PHONE)},
      {"email": string("Email address.", pattern=_EMAIL),
       "company": string("Company name."), "starred": boolean("Star the contact.")})
def add(state: SimState, args: dict[str, Any]) -> Any:
    if find_contact(state, args["name"]) is not None:
        raise Conflict(f"A contact named '{args['name']}' already exists; update it instead.")
    row = {"id": state.new_id("contacts", "contacts"), "name": args["name"].strip(),
           "phone": args["phone"], "email": args.get("email", ""),
           "company": args.get("company", ""), "starred": args.get("starred", False)}
    return out(state.put("contacts", "contacts", row))


update_tool("contacts.update", "Change fields of a contact.", "The updated contact record.", "contacts", "contact",
            "Contact id.", {"name": string("New name.", minLength=1), "phone": string("New phone.", pattern=PHONE),
                            "email": string("New email.", pattern=_EMAIL), "company": string("New company."),
                            "starred": boolean("Starred or not.")})


delete_tool("contacts.delete", "Delete a contact.", "The deleted contact record.",
            "contacts", "contact", "Contact id.")


flag_tool("contacts.star", "Star or unstar a contact.", "The updated contact record.", "contacts", "contact",
          "Contact id.", "starred", boolean("True to star, false to unstar."))


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
_STAR = Toggle("contacts.star", "starred", "Starred", "Starred.", "Unstarred.")
SCREENS = editable_screens(
    "contacts", "contacts", "contact", "Contacts",
    lambda r: row_item(r, r["name"], _STAR.mark(r["phone"], r), long_press=_STAR.flip(r)),
    search=match_fields(("name", "phone", "email", "company")), order=_by_name,
    actions=[("Add", "add", lambda g: g.open("form"))], toggle=_STAR,
    heading=lambda r: r["name"],
    lines=lambda r: [("Phone", r["phone"], "phone"), ("Email", r["email"], "email"),
                     ("Company", r["company"], "company")],
    fields=[("name", "Name"), ("phone", "Phone"), ("email", "Email"), ("company", "Company")],
    arguments=nonempty, create="contacts.add", update="contacts.update", delete="contacts.delete",
    open_created=True)
