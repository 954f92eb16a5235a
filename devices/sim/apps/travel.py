"""The travel app: flights and hotels to search, and my bookings."""

from __future__ import annotations

from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import integer, string
from devices.sim.apps.common import DATE, matches, out, outs, require
from devices.sim.apps.crud import get_tool, list_tool
from devices.sim.apps.records import record_screens
from devices.sim.state import SimState
from devices.sim.tools import Conflict, tool

__all__ = ["LABEL", "ROOT", "SCREENS"]


@tool("travel.search_flights", "Find flights from one city to another, optionally on one day.",
      "Flight records, cheapest first.",
      {"origin": string("From city.", minLength=1), "destination": string("To city.", minLength=1)},
      {"date": string("Day (YYYY-MM-DD).", pattern=DATE)})
def search_flights(state: SimState, args: dict[str, Any]) -> Any:
    rows = [r for r in state.table("travel", "flights").values()
            if r["origin"].lower() == args["origin"].lower()
            and r["destination"].lower() == args["destination"].lower()
            and args.get("date", r["date"]) == r["date"]]
    return outs(sorted(rows, key=lambda r: (r["price"], r["id"])))


get_tool("travel.get_flight", "flights", "flight", "Flight id.")


@tool("travel.search_hotels", "Find hotels in a city.", "Hotel records, cheapest first.",
      {"city": string("City.", minLength=1)}, {"query": string("Text in the hotel name.", minLength=1)})
def search_hotels(state: SimState, args: dict[str, Any]) -> Any:
    rows = [r for r in state.table("travel", "hotels").values()
            if r["city"].lower() == args["city"].lower()
            and ("query" not in args or matches(args["query"], r["name"]))]
    return outs(sorted(rows, key=lambda r: (r["price_per_night"], r["id"])))


get_tool("travel.get_hotel", "hotels", "hotel", "Hotel id.")


@tool("travel.book_flight", "Book seats on a flight.", "The booking record.",
      {"flight_id": string("Flight id.", minLength=1)},
      {"passengers": integer("How many seats (default 1).", minimum=1, maximum=9)})
def book_flight(state: SimState, args: dict[str, Any]) -> Any:
    flight = require(state, "travel", "flights", args["flight_id"], "flight")
    n = args.get("passengers", 1)
    row = {"id": state.new_id("travel", "bookings"), "kind": "flight", "ref_id": flight["id"],
           "passengers": n, "nights": 0, "check_in": flight["date"], "total": round(flight["price"] * n, 2),
           "status": "confirmed"}
    return out(state.put("travel", "bookings", row))


@tool("travel.book_hotel", "Book a hotel room.", "The booking record.",
      {"hotel_id": string("Hotel id.", minLength=1), "check_in": string("Arrival day.", pattern=DATE),
       "nights": integer("Nights.", minimum=1, maximum=30)})
def book_hotel(state: SimState, args: dict[str, Any]) -> Any:
    hotel = require(state, "travel", "hotels", args["hotel_id"], "hotel")
    row = {"id": state.new_id("travel", "bookings"), "kind": "hotel", "ref_id": hotel["id"],
           "passengers": 1, "nights": args["nights"], "check_in": args["check_in"],
           "total": round(hotel["price_per_night"] * args["nights"], 2), "status": "confirmed"}
    return out(state.put("travel", "bookings", row))


list_tool("travel.list_bookings", "List my bookings.", "Booking records.", "bookings")


@tool("travel.cancel_booking", "Cancel a booking.", "The updated booking.",
      {"id": string("Booking id.", minLength=1)})
def cancel_booking(state: SimState, args: dict[str, Any]) -> Any:
    row = require(state, "travel", "bookings", args["id"], "booking")
    if row["status"] == "cancelled":
        raise Conflict("That booking is already cancelled.")
    return out(state.update("travel", "bookings", row["id"], {"status": "cancelled"}))


# ---- screens -------------------------------------------------------------------------------

LABEL = APP_LABELS["travel"]
ROOT = "list"
SCREENS = record_screens(
    "travel", "bookings", "My trips", row_title=lambda r: f"{r['kind'].title()} {r['ref_id']}",
    row_subtitle=lambda r: f"{r['check_in']} · {r['status']}",
    lines=lambda r: [("Total", f"{r['total']:.2f}", "total"), ("Status", r["status"], "status")],
    what="booking")
