"""The shopping app: a product catalogue, a cart and orders; its tools and screens."""

from __future__ import annotations

from typing import Any

from devices.sim.apps.common import matches, out, outs, require
from devices.sim.state import SimState
from devices.sim.tools import Conflict, NotFound, integer, number, string, tool

__all__ = ["add_item", "cart_total"]

# Most a person may put in the cart of one product (stops runaway quantities).
MAX_QUANTITY = 99


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


@tool("shopping.search", "Find products by name or category.", "Product records, cheapest first.",
      {"query": string("Text to look for.", minLength=1)},
      {"max_price": number("Highest price.", minimum=0), "in_stock": {"type": "boolean", "description": "Only in stock."}})
def search(state: SimState, args: dict[str, Any]) -> Any:
    rows = [r for r in state.table("shopping", "products").values()
            if matches(args["query"], r["name"], r["category"])
            and r["price"] <= args.get("max_price", float("inf"))
            and (not args.get("in_stock") or r["stock"] > 0)]
    return outs(sorted(rows, key=lambda r: (r["price"], r["id"])))


@tool("shopping.get_product", "Get one product by id.", "The product record.",
      {"id": string("Product id, e.g. 'pr1'.", minLength=1)})
def get_product(state: SimState, args: dict[str, Any]) -> Any:
    return out(require(state, "shopping", "products", args["id"], "product"))


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


@tool("shopping.list_orders", "List all orders.", "Order records.")
def list_orders(state: SimState, args: dict[str, Any]) -> Any:
    return outs(state.table("shopping", "orders").values())


@tool("shopping.cancel_order", "Cancel an order that has not been delivered.", "The updated order record.",
      {"order_id": string("Order id.", minLength=1)})
def cancel_order(state: SimState, args: dict[str, Any]) -> Any:
    row = require(state, "shopping", "orders", args["order_id"], "order")
    if row["status"] in ("delivered", "cancelled"):
        raise Conflict(f"Order '{row['id']}' is already {row['status']} and cannot be cancelled.")
    return out(state.update("shopping", "orders", row["id"], {"status": "cancelled"}))
