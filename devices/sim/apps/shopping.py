"""The shopping app: a product catalogue, a cart and orders; its tools and screens."""

from __future__ import annotations

from typing import Any

from devices.kit.apps import APP_LABELS
from devices.kit.validators import integer, number, string
from devices.sim.apps.common import match_fields, out, require, sort_by
from devices.sim.apps.crud import get_tool, list_tool, search_tool
from devices.sim.apps.records import record_detail, record_list, row_item
from devices.sim.state import SimState
from devices.sim.tools import Conflict, NotFound, tool

__all__ = ["LABEL", "ROOT", "SCREENS", "add_item", "cart_total"]

# Most a person may put in the cart of one product (stops runaway quantities).
MAX_QUANTITY = 99
# What shopping.search and the list screen's search field look in.
_TEXT = match_fields(("name", "category"))


def cart_total(state: SimState) -> float:
    products = state.table("shopping", "products")
    return round(sum(products[c["product_id"]]["price"] * c["quantity"]
                     for c in state.table("shopping", "cart").values()), 2)


def add_item(state: SimState, product_id: str, quantity: int) -> dict[str, Any]:
    product = require(state, "shopping", "products", product_id, "product")
    for row in state.table("shopping", "cart").values():
        if row["product_id"] == product_id:
            total = row["quantity"] + quantity
            if total > product["stock"]:
                raise Conflict(f"Only {product['stock']} of '{product['name']}' are in stock.")
            return state.update("shopping", "cart", row["id"], {"quantity": total})
    if quantity > product["stock"]:
        raise Conflict(f"Only {product['stock']} of '{product['name']}' are in stock.")
    row = {"id": state.new_id("shopping", "cart"), "product_id": product_id, "quantity": quantity}
    return state.put("shopping", "cart", row)


search_tool("shopping.search", "Find products by name or category.", "Product records, cheapest first.",
            "products", _TEXT, order=sort_by("price", "id"),
            where=lambda r, args: r["price"] <= args.get("max_price", float("inf"))
            and (not args.get("in_stock") or r["stock"] > 0),
            optional={"max_price": number("Highest price.", minimum=0),
                      "in_stock": {"type": "boolean", "description": "Only in stock."}})


get_tool("shopping.get_product", "products", "product", "Product id, e.g. 'pr1'.")


@tool("shopping.add_to_cart", "Put a product in the cart.", "The cart line.",
      {"product_id": string("Product id.", minLength=1)},
      {"quantity": integer("How many (default 1).", minimum=1, maximum=MAX_QUANTITY)})
def add_to_cart(state: SimState, args: dict[str, Any]) -> Any:
    return out(add_item(state, args["product_id"], args.get("quantity", 1)))


@tool("shopping.remove_from_cart", "Take a product out of the cart.", "The removed cart line.",
      {"product_id": string("Product id.", minLength=1)})
def remove_from_cart(state: SimState, args: dict[str, Any]) -> Any:
    for row in state.table("shopping", "cart").values():
        if row["product_id"] == args["product_id"]:
            return out(state.delete("shopping", "cart", row["id"]))
    raise NotFound(f"Product '{args['product_id']}' is not in the cart.")


@tool("shopping.view_cart", "Show the cart.", "{'items': cart lines with product, 'total'}.")
def view_cart(state: SimState, args: dict[str, Any]) -> Any:
    products = state.table("shopping", "products")
    items = [{**out(c), "name": products[c["product_id"]]["name"],
              "price": products[c["product_id"]]["price"]}
             for c in state.table("shopping", "cart").values()]
    return {"items": items, "total": cart_total(state)}


@tool("shopping.checkout", "Order everything in the cart and ship it to an address.", "The order record.",
      {"address": string("Delivery address.", minLength=3)})
def checkout(state: SimState, args: dict[str, Any]) -> Any:
    cart = list(state.table("shopping", "cart").values())
    if not cart:
        raise Conflict("The cart is empty; add products before checking out.")
    total = cart_total(state)
    for line in cart:
        product = state.get("shopping", "products", line["product_id"])
        state.update("shopping", "products", product["id"], {"stock": product["stock"] - line["quantity"]})
        state.delete("shopping", "cart", line["id"])
    row = {"id": state.new_id("shopping", "orders"),
           "items": [{"product_id": c["product_id"], "quantity": c["quantity"]} for c in cart],
           "total": total, "address": args["address"], "status": "placed"}
    return out(state.put("shopping", "orders", row))


@tool("shopping.order_status", "The status of an order.", "The order record.",
      {"order_id": string("Order id, e.g. 'or1'.", minLength=1)})
def order_status(state: SimState, args: dict[str, Any]) -> Any:
    return out(require(state, "shopping", "orders", args["order_id"], "order"))


list_tool("shopping.list_orders", "List all orders.", "Order records.", "orders")


@tool("shopping.cancel_order", "Cancel an order that has not been delivered.", "The updated order record.",
      {"order_id": string("Order id.", minLength=1)})
def cancel_order(state: SimState, args: dict[str, Any]) -> Any:
    row = require(state, "shopping", "orders", args["order_id"], "order")
    if row["status"] in ("delivered", "cancelled"):
        raise Conflict(f"Order '{row['id']}' is already {row['status']} and cannot be cancelled.")
    return out(state.update("shopping", "orders", row["id"], {"status": "cancelled"}))


# ---- screens -------------------------------------------------------------------------------

LABEL = APP_LABELS["shopping"]
ROOT = "list"


def _item(row: dict[str, Any]) -> tuple:
    stock = f"{row['stock']} in stock" if row["stock"] else "out of stock"
    return row_item(row, row["name"], f"${row['price']:.2f} · {stock}")


def _add_button(b: Any, state: SimState, row: dict[str, Any]) -> None:
    def add(g: Any, i: str = row["id"]) -> str:
        g.call("shopping.add_to_cart", {"product_id": i, "quantity": 1})
        return "Added to cart."

    b.button("Add to cart", "add_to_cart", add)


def _cart(b: Any, state: SimState, frame: dict[str, Any]) -> None:
    products = state.table("shopping", "products")

    def remove(g: Any, product_id: str) -> str:
        g.call("shopping.remove_from_cart", {"product_id": product_id})
        return "Removed from cart."

    b.toolbar("Cart", back=lambda g: g.back())
    for line in state.table("shopping", "cart").values():
        product = products.get(line["product_id"], {"name": line["product_id"], "price": 0.0})
        b.label(f"{product['name']} × {line['quantity']}", "line")
    b.label(f"Total: ${cart_total(state):.2f}", "total")
    b.field("address", "Delivery address", frame["fields"].get("address", ""),
            focused=frame["focus"] == "address")

    def checkout_now(g: Any) -> str:
        order = g.call("shopping.checkout", {"address": g.fields.get("address", "").strip()})
        g.back()
        return f"Order {order['id']} placed."

    b.button("Checkout", "checkout", checkout_now)
    for line in list(state.table("shopping", "cart").values())[:3]:
        b.button(f"Remove {products.get(line['product_id'], {'name': '?'})['name']}", "remove",
                 lambda g, p=line["product_id"]: remove(g, p))


SCREENS = {
    "list": record_list("shopping", "products", "Shop", _item, search=_TEXT, order=sort_by("name"),
                        actions=[("Cart", "cart", lambda g: g.open("cart"))]),
    "detail": record_detail("shopping", "products", "product", lambda r: r["name"],
                            lambda r: [("Price", f"${r['price']:.2f}", "price"), ("Category", r["category"], "category"),
                                       ("Stock", r["stock"], "stock")], _add_button),
    "cart": _cart,
}
