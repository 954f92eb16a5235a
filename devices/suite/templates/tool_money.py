"""Tool templates about money and trips: the bank, shopping and travel apps.

Amounts, accounts, payees, products and flights differ per instance and come with
near-identical distractors (several stores with the same product, older orders, other days).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from devices.suite.diff import Add, AnswerIs, Update
from devices.suite.templates._vocab import (
    ACCOUNT_NAMES,
    CITIES,
    COMPANIES3,
    HOTELS,
    PRODUCTS3,
    STORES,
)
from devices.suite.templates._world import (
    CART,
    EMAIL_READ,
    RELATIONS,
    STOCK,
    TEXT_READ,
    WEEKDAYS,
    World,
    WorldTemplate,
    balance_of,
    best_hotel_under,
    call,
    cheapest,
    date_from,
    day_of,
    find_rows,
    finish,
    gui_steps,
    last_order,
    lookup,
    now_of,
    one,
    person_by_relation,
    screen_text,
    weekday_date,
    weekday_name,
)

__all__ = ["TEMPLATES"]

def _accounts(w: World, n: int = 3) -> list[dict[str, Any]]:
    return [w.add("bank", "accounts", "ac", name=name, number=f"•••• {w.rng.randint(1000, 9999)}",
                  balance=w.money(600, 4000), currency="USD") for name in w.draw(ACCOUNT_NAMES, n)]


def _tx(w: World, account: str, store: str, amount: float, day: int) -> dict[str, Any]:
    return w.add("bank", "transactions", "tx", account_id=account, date=w.day(day), description="Card payment",
                 counterparty=store, amount=amount, category="shopping",
                 reference=f"REF{w.rng.randrange(10 ** 6):06d}")


class SpentAtStore(WorldTemplate):
    name = "spent_at_store"
    apps = ("bank",)
    tier = "easy"
    chain = 1
    checker = "state_and_answer"
    lookups = ("bank.list_transactions",)
    goal_template = "How much did I spend at {store} in the last {days} days?"

    def build(self, w: World) -> dict[str, Any]:
        store, other = w.draw(STORES, 2)
        days = w.pick([7, 10, 14])
        account = _accounts(w, 1)[0]["id"]
        total = 0.0
        for _ in range(w.rng.randint(2, 4)):
            amount = -w.money(5, 80)
            total += amount
            _tx(w, account, store, amount, -w.rng.randint(0, days - 1))
        _tx(w, account, store, -w.money(5, 80), -days - w.rng.randint(2, 9))
        _tx(w, account, store, w.money(3, 20), -1)  # a refund is not spending
        _tx(w, account, other, -w.money(5, 80), -1)
        return {"store": store, "days": days, "_total": round(-total, 2)}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [AnswerIs(p["_total"])]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        since = day_of(observe, -(p["days"] - 1))
        rows = yield from lookup(observe, call("bank.list_transactions", query=p["store"], since=since))
        if rows is not None:
            spent = -sum(r["amount"] for r in find_rows(rows, counterparty=p["store"]) if r["amount"] < 0)
            yield finish(f"{spent:.2f}")


class TransferHalf(WorldTemplate):
    name = "transfer_half"
    apps = ("bank", "contacts", "messages")
    tier = "hard"
    chain = 1
    lookups = ("bank.list_accounts", "contacts.search")
    goal_template = ("Move half of what's in my {source} account into my {target} account, then text my "
                     "{relation} the amount I moved.")

    def build(self, w: World) -> dict[str, Any]:
        a, b, _ = _accounts(w)
        relation, person, _ = w.related()
        return {"source": a["name"], "target": b["name"], "relation": relation, "_from": a["id"], "_to": b["id"],
                "_amount": round(a["balance"] / 2, 2), "_phone": person["phone"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("bank", "payments", {"from_account": p["_from"], "to": p["_to"], "amount": p["_amount"]}),
                balance_of(p["_from"], p["_to"]),
                Add("messages", "messages", {"phone": p["_phone"], "direction": "out",
                                             "body": ("~", f"{p['_amount']:.2f}")})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("bank.list_accounts"))
        src, dst = one(rows, name=p["source"]), one(rows, name=p["target"])
        person = yield from person_by_relation(observe, p["relation"])
        if src and dst and person:
            amount = round(src["balance"] / 2, 2)
            yield call("bank.transfer", from_account=src["id"], to_account=dst["id"], amount=amount)
            yield call("messages.send", contact=person["name"], body=f"I moved {amount:.2f}")


class PayInvoiceEmail(WorldTemplate):
    name = "pay_invoice_email"
    apps = ("email", "bank")
    tier = "hard"
    chain = 1
    lookups = ("email.search", "bank.list_payees", "bank.list_accounts")
    goal_template = "Pay the invoice {company} emailed me, from my {account} account."

    def build(self, w: World) -> dict[str, Any]:
        company, other = w.draw(COMPANIES3, 2)
        accounts = _accounts(w)
        amount, decoy = w.money(40, 400), w.money(40, 400)
        payee = w.payee(company, f"DE{w.rng.randrange(10 ** 18):018d}")
        w.payee(other, f"DE{w.rng.randrange(10 ** 18):018d}")
        for who, amt, day in ((company, amount, -1), (other, decoy, -2)):
            slug = who.split()[0].lower()
            w.email(f"billing@{slug}.example", f"Invoice from {who}", f"Amount due: ${amt:.2f}. Thank you.",
                    f"{w.day(day)}T08:30")
        return {"company": company, "account": accounts[1]["name"], "_payee": payee["id"],
                "_from": accounts[1]["id"], "_amount": amount}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("bank", "payments", {"from_account": p["_from"], "to": p["_payee"], "amount": p["_amount"]}),
                balance_of(p["_from"]), EMAIL_READ]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        mails = yield from lookup(observe, call("email.search", query=f"Invoice from {p['company']}"))
        mail = one(mails)
        found = re.search(r"\$(\d+(?:\.\d\d)?)", mail["body"]) if mail else None
        if not found:
            return
        payees = yield from lookup(observe, call("bank.list_payees", query=p["company"]))
        accounts = yield from lookup(observe, call("bank.list_accounts"))
        payee, account = one(payees, name=p["company"]), one(accounts, name=p["account"])
        if payee and account:
            yield call("bank.pay", payee_id=payee["id"], from_account=account["id"], amount=float(found.group(1)))


class PayBackRelation(WorldTemplate):
    name = "pay_back_relation"
    apps = ("contacts", "messages", "bank")
    tier = "hard"
    chain = 2
    test_only = True
    lookups = ("contacts.search", "messages.list", "bank.list_payees", "bank.list_accounts")
    goal_template = "Pay my {relation} back the amount they texted me about, from my {account} account."

    def build(self, w: World) -> dict[str, Any]:
        relation, target, everyone = w.related()
        accounts = _accounts(w)
        amount = w.money(10, 150)
        for person, amt in ((target, amount), (everyone[1], w.money(10, 150))):
            w.text(person, f"You owe me ${amt:.2f} for the tickets", f"{w.day(-1)}T18:00")
            w.payee(person["name"], f"GB{w.rng.randrange(10 ** 20):020d}")
        payee = w.tables["bank"]["payees"][-2]
        return {"relation": relation, "account": accounts[0]["name"], "_payee": payee["id"],
                "_from": accounts[0]["id"], "_amount": amount}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("bank", "payments", {"from_account": p["_from"], "to": p["_payee"], "amount": p["_amount"]}),
                balance_of(p["_from"]), TEXT_READ]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        person = yield from person_by_relation(observe, p["relation"])
        if not person:
            return
        texts = yield from lookup(observe, call("messages.list", contact=person["name"]))
        amounts = [m.group(1) for r in find_rows(texts) if (m := re.search(r"\$(\d+(?:\.\d\d)?)", r["body"]))]
        payees = yield from lookup(observe, call("bank.list_payees", query=person["name"]))
        accounts = yield from lookup(observe, call("bank.list_accounts"))
        payee, account = one(payees, name=person["name"]), one(accounts, name=p["account"])
        if len(amounts) == 1 and payee and account:
            yield call("bank.pay", payee_id=payee["id"], from_account=account["id"], amount=float(amounts[0]))


class BankReferenceGui(WorldTemplate):
    name = "bank_reference_gui"
    apps = ("bank",)
    tier = "hard"
    chain = 2
    gui = True
    checker = "state_and_answer"
    lookups = ("bank.list_transactions", "bank.list_accounts")
    goal_template = "What is the bank reference of my {store} payment from {weekday}?"

    def build(self, w: World) -> dict[str, Any]:
        store = w.draw(STORES)
        accounts = _accounts(w, 2)
        day = -w.rng.randint(1, 6)
        target = _tx(w, accounts[0]["id"], store, -w.money(5, 90), day)
        _tx(w, accounts[1]["id"], store, -w.money(5, 90), day - 7)
        return {"store": store, "weekday": weekday_name(w.day(day)), "_ref": target["reference"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [AnswerIs(p["_ref"])]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        now = now_of(observe)
        back = (now.weekday() - WEEKDAYS.index(p["weekday"])) % 7 or 7
        date = date_from(now, -back)
        rows = yield from lookup(observe, call("bank.list_transactions", query=p["store"], since=date, until=date))
        payment = one(rows)
        if not payment:
            return
        accounts = yield from lookup(observe, call("bank.list_accounts"))
        account = one(accounts, id=payment["account_id"])
        if not account:
            return
        ok = yield from gui_steps(observe, "Bank", [{"text": account["name"]}, {"text": "Transactions"},
                                                    {"startswith": f"{date} · "}])
        ref = screen_text(observe(), "/reference") if ok else None
        if ref:
            yield finish(ref.removeprefix("Reference: "))


class CheaperOfTwo(WorldTemplate):
    name = "cheaper_of_two"
    apps = ("shopping",)
    tier = "hard"
    chain = 1
    lookups = ("shopping.search", "shopping.list_orders")
    goal_template = ("Order the cheaper of the two in-stock {product} listings, shipped to the address of my "
                     "last order.")

    def build(self, w: World) -> dict[str, Any]:
        product = w.draw(PRODUCTS3)
        stores = w.draw(STORES, 3)
        prices = sorted(w.money(8, 60) for _ in range(3))
        rows = [w.product(f"{product.title()} ({s})", price, stock)
                for s, price, stock in zip(stores, prices, (0, 12, 9), strict=True)]
        w.product(f"{product.title()} case ({stores[0]})", round(prices[0] / 3, 2), 30)
        address = f"{w.rng.randint(1, 200)} {w.pick(['Elm', 'Birch', 'Quarry', 'Mill'])} Road"
        w.order([], 5.0, "4 Old Lane", w.day(-40))
        w.order([], 5.0, address, w.day(-4))
        return {"product": product, "_id": rows[1]["id"], "_address": address}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("shopping", "orders", {"items": [{"product_id": p["_id"], "quantity": 1}],
                                           "address": p["_address"]}), STOCK, CART]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("shopping.search", query=p["product"], in_stock=True))
        same = [r for r in find_rows(rows) if r["name"].lower().startswith(f"{p['product']} (")]
        orders = yield from lookup(observe, call("shopping.list_orders"))
        last = last_order(orders)
        if same and last:
            best = cheapest(same)
            yield call("shopping.add_to_cart", product_id=best["id"], quantity=1)
            yield call("shopping.checkout", address=last["address"])


class ReorderLast(WorldTemplate):
    name = "reorder_last"
    apps = ("shopping",)
    tier = "hard"
    chain = 1
    lookups = ("shopping.list_orders",)
    goal_template = "Order again exactly what was in my most recent order, to the same address."

    def build(self, w: World) -> dict[str, Any]:
        products = [w.product(f"{name.title()}", w.money(5, 50), 40) for name in w.draw(PRODUCTS3, 3)]
        items = [{"product_id": products[0]["id"], "quantity": w.rng.randint(1, 3)},
                 {"product_id": products[1]["id"], "quantity": w.rng.randint(1, 3)}]
        address = f"{w.rng.randint(1, 200)} {w.pick(['Elm', 'Birch', 'Quarry', 'Mill'])} Road"
        w.order([{"product_id": products[2]["id"], "quantity": 1}], 9.0, "9 Old Lane", w.day(-30))
        w.order(items, 20.0, address, w.day(-3))
        return {"_items": items, "_address": address}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("shopping", "orders", {"items": p["_items"], "address": p["_address"], "status": "placed"}),
                STOCK, CART]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("shopping.list_orders"))
        last = last_order(rows)
        if not last:
            return
        for item in last["items"]:
            yield call("shopping.add_to_cart", product_id=item["product_id"], quantity=item["quantity"])
        yield call("shopping.checkout", address=last["address"])


class CancelUnshipped(WorldTemplate):
    name = "cancel_unshipped"
    apps = ("shopping",)
    tier = "medium"
    chain = 1
    lookups = ("shopping.search", "shopping.list_orders")
    goal_template = "Cancel my order with the {product} in it, the one that hasn't arrived yet."

    def build(self, w: World) -> dict[str, Any]:
        product, other = w.draw(PRODUCTS3, 2)
        a = w.product(product.title(), w.money(5, 50), 5)
        b = w.product(other.title(), w.money(5, 50), 5)
        w.order([{"product_id": a["id"], "quantity": 1}], a["price"], "1 Home St", w.day(-20))
        target = w.order([{"product_id": a["id"], "quantity": 2}], a["price"] * 2, "1 Home St", w.day(-1),
                         status="placed")
        w.order([{"product_id": b["id"], "quantity": 1}], b["price"], "1 Home St", w.day(-1), status="placed")
        return {"product": product, "_id": target["id"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("shopping", "orders", p["_id"], {"status": "cancelled"})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        products = yield from lookup(observe, call("shopping.search", query=p["product"]))
        product = one(products, name=p["product"].title())
        if not product:
            return
        orders = yield from lookup(observe, call("shopping.list_orders"))
        open_ = [o for o in find_rows(orders) if o["status"] == "placed"
                 and any(i["product_id"] == product["id"] for i in o["items"])]
        if len(open_) == 1:
            yield call("shopping.cancel_order", order_id=open_[0]["id"])


def _flight(w: World, origin: str, dest: str, date: str, price: float) -> dict[str, Any]:
    hour = w.rng.randint(6, 19)
    return w.flight(origin, dest, date, f"{hour:02d}:10", f"{hour + 2:02d}:{w.rng.randrange(60):02d}", price,
                    w.pick(["Skylark", "Nordair", "Blue Heron"]))


class CheapestFlightToRelation(WorldTemplate):
    name = "cheapest_flight_to_relation"
    apps = ("contacts", "travel")
    tier = "hard"
    chain = 2
    lookups = ("contacts.search", "travel.search_flights")
    goal_template = ("Book the cheapest flight from {origin} on {weekday} to the city my {relation} lives in, "
                     "for {n} people.")

    def build(self, w: World) -> dict[str, Any]:
        relation = w.pick(RELATIONS)
        origin, city, other = w.draw(CITIES, 3)
        target, everyone = w.people(relation)
        target["city"] = city
        everyone[1]["city"] = other
        date = w.some_weekday()
        prices = sorted(w.money(60, 400) for _ in range(3))
        best = _flight(w, origin, city, date, prices[1])
        _flight(w, origin, city, date, prices[2])
        _flight(w, origin, city, w.day(-1 if date == w.day(1) else 1), prices[0])
        _flight(w, origin, other, date, round(prices[1] - 10, 2))
        n = w.rng.randint(1, 3)
        return {"origin": origin, "weekday": weekday_name(date), "relation": relation, "n": n, "_id": best["id"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("travel", "bookings", {"kind": "flight", "ref_id": p["_id"], "passengers": p["n"]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        person = yield from person_by_relation(observe, p["relation"])
        if not person:
            return
        date = weekday_date(observe, p["weekday"])
        flights = yield from lookup(observe, call("travel.search_flights", origin=p["origin"],
                                                  destination=person["city"], date=date))
        if flights:
            best = cheapest(flights)
            yield call("travel.book_flight", flight_id=best["id"], passengers=p["n"])


def _booked_flight(w: World, dest: str, day: int) -> tuple[dict[str, Any], dict[str, Any]]:
    flight = _flight(w, w.draw(CITIES), dest, w.day(day), w.money(60, 300))
    return flight, w.flight_booking(flight)


class HotelForFlight(WorldTemplate):
    name = "hotel_for_flight"
    apps = ("travel",)
    tier = "hard"
    chain = 3
    lookups = ("travel.list_bookings", "travel.get_flight", "travel.search_hotels")
    goal_template = ("Book a hotel for my upcoming flight: the best-rated one under ${cap} a night in the city "
                     "I land in, from the arrival day, for {nights} nights.")

    def build(self, w: World) -> dict[str, Any]:
        city, old = w.draw(CITIES, 2)
        _booked_flight(w, old, -20)
        flight, _ = _booked_flight(w, city, w.rng.randint(3, 20))
        cap = w.pick([120, 150, 180])
        names = w.draw(HOTELS, 3)
        good = w.hotel(names[0], city, cap - w.rng.randint(5, 40), 4.6)
        w.hotel(names[1], city, cap + 30, 4.9)
        w.hotel(names[2], city, cap - 50, 3.9)
        w.hotel(names[1], old, cap - 60, 4.8)
        return {"cap": cap, "nights": w.rng.randint(2, 5), "_id": good["id"], "_date": flight["date"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("travel", "bookings", {"kind": "hotel", "ref_id": p["_id"], "nights": p["nights"],
                                           "check_in": p["_date"]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        bookings = yield from lookup(observe, call("travel.list_bookings"))
        today = day_of(observe)
        ahead = [b for b in find_rows(bookings, kind="flight", status="confirmed") if b["check_in"] >= today]
        if len(ahead) != 1:
            return
        flight = yield from lookup(observe, call("travel.get_flight", id=ahead[0]["ref_id"]))
        if not flight:
            return
        best = yield from best_hotel_under(observe, flight["destination"], p["cap"])
        if best:
            yield call("travel.book_hotel", hotel_id=best["id"], check_in=flight["date"], nights=p["nights"])


class CancelHotelOnDay(WorldTemplate):
    name = "cancel_hotel_on_day"
    apps = ("travel",)
    tier = "medium"
    chain = 1
    lookups = ("travel.list_bookings",)
    goal_template = "Cancel the hotel booking that starts next {weekday}, and the flight booked for that day."

    def build(self, w: World) -> dict[str, Any]:
        date = w.some_weekday()
        target = w.hotel_booking(w.rid("ho"), 2, date, 300.0)
        w.hotel_booking(w.rid("ho"), 3, w.day(9 if date < w.day(5) else 2), 410.0)
        offset = (datetime.strptime(date, "%Y-%m-%d") - w.now.replace(tzinfo=None, hour=0)).days
        _, flight = _booked_flight(w, w.draw(CITIES), offset)
        _booked_flight(w, w.draw(CITIES), offset + 7)
        return {"weekday": weekday_name(date), "_id": target["id"], "_flight": flight["id"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("travel", "bookings", p["_id"], {"status": "cancelled"}),
                Update("travel", "bookings", p["_flight"], {"status": "cancelled"})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        date = weekday_date(observe, p["weekday"])
        rows = yield from lookup(observe, call("travel.list_bookings"))
        hotel = one([r for r in find_rows(rows, kind="hotel") if r["check_in"] == date])
        flight = one([r for r in find_rows(rows, kind="flight") if r["check_in"] == date])
        if hotel and flight:
            yield call("travel.cancel_booking", id=hotel["id"])
            yield call("travel.cancel_booking", id=flight["id"])


class FlightLandingTime(WorldTemplate):
    name = "flight_landing_time"
    apps = ("travel",)
    tier = "hard"
    chain = 2
    checker = "state_and_answer"
    test_only = True
    lookups = ("travel.list_bookings", "travel.get_flight")
    goal_template = "What time does my flight to {city} land?"

    def build(self, w: World) -> dict[str, Any]:
        city, day = w.nth(CITIES, range(2, 16))
        other = w.other(CITIES, city)
        flight, _ = _booked_flight(w, city, day)
        _booked_flight(w, other, w.rng.randint(2, 15))
        _flight(w, flight["origin"], city, flight["date"], w.money(60, 300))  # not booked
        return {"city": city, "_time": flight["arrive"], "_day": day}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [AnswerIs(p["_time"])]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("travel.list_bookings"))
        for booking in find_rows(rows, kind="flight", status="confirmed"):
            flight = yield from lookup(observe, call("travel.get_flight", id=booking["ref_id"]))
            if flight and flight["destination"] == p["city"]:
                yield finish(flight["arrive"])
                return


TEMPLATES = [SpentAtStore, TransferHalf, PayInvoiceEmail, PayBackRelation, BankReferenceGui, CheaperOfTwo,
             ReorderLast, CancelUnshipped, CheapestFlightToRelation, HotelForFlight, CancelHotelOnDay,
             FlightLandingTime]
