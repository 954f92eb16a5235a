"""Deeper tool templates: each needs a chain of lookups whose results decide the next calls,
then two or more writes the goal asks for.

- `reply_latest_from_relation`: who "my boss" is, then that person's latest email among
  older ones and a namesake's, then reply and star it.
- `hotel_name_to_relation`: the upcoming hotel booking (not the past or cancelled one), its
  hotel's name (only `travel.get_hotel` has it), then text it to a relation.
- `order_query_reply`: the email asking about an order (not a newsletter about orders), the order
  id in its text, that order's status (`shopping.order_status`), then cancel it only if it has
  not been delivered, and reply with the sentence that fits.
- `playlist_opener_to_relation`: the playlist by its name (not its "... 2" twin), its first track
  id, that track's title (`music.get_track`; playlists hold ids only), then a text to a relation.
- `favorite_for_guests`: the favourite recipe of a cuisine (not a favourite of another
  cuisine, not a non-favourite of the same), how many batches the guests need, then the
  cheapest in-stock offer of each ingredient, in that quantity.
"""

from __future__ import annotations

import math
import re
from typing import Any

from devices.suite.diff import Add, Update
from devices.suite.templates._vocab import (
    ALBUMS3,
    ARTISTS,
    CUISINES,
    DISHES,
    HOTELS,
    INGREDIENTS,
    PHRASES3,
    SONGS,
)
from devices.suite.templates._world import (
    EMAIL_READ,
    World,
    WorldTemplate,
    call,
    cart_cheapest,
    day_of,
    earliest_from,
    find_rows,
    latest,
    lookup,
    one,
    person_by_relation,
)

__all__ = ["TEMPLATES"]

def _mail(w: World, sender: str, subject: str, day: int, hour: int) -> dict[str, Any]:
    return w.email(sender, subject, f"{subject}.", f"{w.day(day)}T{hour:02d}:{w.rng.randrange(60):02d}")


class ReplyLatestFromRelation(WorldTemplate):
    name = "reply_latest_from_relation"
    apps = ("contacts", "email")
    tier = "hard"
    chain = 2
    lookups = ("contacts.search", "email.search")
    goal_template = "Answer the latest email from my {relation} with \"{phrase}\", and star that email."

    def build(self, w: World) -> dict[str, Any]:
        relation, target, everyone = w.related()
        namesake = everyone[1]
        subjects = ["Quick question", "Following up", "Re: plans", "One more thing"]
        w.rng.shuffle(subjects)
        _mail(w, target["email"], subjects[0], -w.rng.randint(4, 9), 9)
        latest = _mail(w, target["email"], subjects[1], -w.rng.randint(0, 2), 8)
        _mail(w, namesake["email"], subjects[2], 0, 11)  # newer, but from the namesake
        return {"relation": relation, "phrase": w.draw(PHRASES3), "_to": target["email"], "_id": latest["id"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("email", "emails", {"folder": "sent", "to": [p["_to"]], "body": p["phrase"]}),
                Update("email", "emails", p["_id"], {"starred": True}, free=("read",)), EMAIL_READ]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        person = yield from person_by_relation(observe, p["relation"])
        if not person:
            return
        mails = yield from lookup(observe, call("email.search", query=person["email"], folder="inbox"))
        last = latest(mails, "received_at", sender=person["email"])
        if last:
            yield call("email.reply", id=last["id"], body=p["phrase"])
            yield call("email.star", id=last["id"], starred=True)


class HotelNameToRelation(WorldTemplate):
    name = "hotel_name_to_relation"
    apps = ("travel", "contacts", "messages")
    tier = "hard"
    chain = 2
    lookups = ("travel.list_bookings", "travel.get_hotel", "contacts.search")
    goal_template = "Text my {relation} the name of the hotel I'm booked into next."

    def build(self, w: World) -> dict[str, Any]:
        relation, target, _ = w.related()
        names = w.draw(HOTELS, 3)
        hotels = [w.hotel(n, "", w.money(80, 200), round(w.rng.uniform(3.5, 4.9), 1)) for n in names]
        w.hotel_booking(hotels[1]["id"], 2, w.day(-w.rng.randint(5, 30)), 250.0)  # past stay
        w.hotel_booking(hotels[2]["id"], 3, w.day(w.rng.randint(2, 6)), 390.0, status="cancelled")
        w.hotel_booking(hotels[0]["id"], 2, w.day(w.rng.randint(7, 20)), 310.0)
        return {"relation": relation, "_phone": target["phone"], "_hotel": names[0]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("messages", "messages", {"phone": p["_phone"], "direction": "out", "body": ("~", p["_hotel"])})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        bookings = yield from lookup(observe, call("travel.list_bookings"))
        today = day_of(observe)
        booking = earliest_from(bookings, "check_in", today, kind="hotel", status="confirmed")
        if not booking:
            return
        hotel = yield from lookup(observe, call("travel.get_hotel", id=booking["ref_id"]))
        if not hotel:
            return
        person = yield from person_by_relation(observe, p["relation"])
        if person:
            yield call("messages.send", contact=person["name"], body=f"I'm staying at {hotel['name']}.")


class FavoriteForGuests(WorldTemplate):
    name = "favorite_for_guests"
    apps = ("recipes", "shopping")
    tier = "hard"
    chain = 2
    lookups = ("recipes.list_favorites", "shopping.search")
    goal_template = ("I'm cooking my favourite {cuisine} recipe for {guests} people. Put its ingredients in the "
                     "cart: the cheapest in-stock offer of each, one pack per batch of the recipe (batches "
                     "rounded up).")

    def build(self, w: World) -> dict[str, Any]:
        cuisine, other = w.draw(CUISINES, 2)
        dishes = w.draw(DISHES, 3)
        ingredients = w.draw(INGREDIENTS, 3)
        servings = w.pick([2, 3, 4])
        guests = w.pick([g for g in range(5, 13) if g % servings])
        mine = ingredients[:2]
        w.recipe(dishes[0], cuisine, 40, mine, servings=servings, favorite=True)
        w.recipe(dishes[1], other, 30, [ingredients[2], ingredients[0]], favorite=True)
        w.recipe(dishes[2], cuisine, 50, [ingredients[2]])
        picks = []
        for ing in ingredients:
            best = w.grocery_offers(ing, "bulk", "deli", 30)
            if ing in mine:
                picks.append(best["id"])
        return {"cuisine": cuisine, "guests": guests, "_ids": picks, "_packs": math.ceil(guests / servings)}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("shopping", "cart", {"product_id": pid, "quantity": p["_packs"]}) for pid in p["_ids"]]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        favorites = yield from lookup(observe, call("recipes.list_favorites"))
        recipe = one(favorites, cuisine=p["cuisine"])
        if not recipe:
            return
        packs = math.ceil(p["guests"] / recipe["servings"])
        yield from cart_cheapest(observe, recipe["ingredients"], packs)


_ORDER_ID = re.compile(r"\bor[0-9a-f]{5}\b")
CANCELLED = "I cancelled it, sorry for the wait."
DELIVERED = "It shows as delivered already."


class OrderQueryReply(WorldTemplate):
    name = "order_query_reply"
    apps = ("email", "shopping")
    tier = "hard"
    chain = 2
    lookups = ("email.search", "shopping.order_status")
    goal_template = ("Someone emailed me asking about one of my orders. If it hasn't been delivered yet, cancel "
                     "it and reply \"{cancelled}\"; if it has, just reply \"{delivered}\".")

    def build(self, w: World) -> dict[str, Any]:
        product = w.product(w.draw(PHRASES3).split()[-1].title(), w.money(5, 40), 10)
        orders = [w.order([{"product_id": product["id"], "quantity": 1}], product["price"], "1 Home St", w.day(-k),
                          status=status)
                  for status, k in (("placed", 1), ("shipped", 3), ("delivered", 9))]
        target = w.pick(orders)
        asker = w.contact()
        _mail(w, asker["email"], "Quick question about an order", 0, 9)
        w.tables["email"]["emails"][-1]["body"] = f"Did order {target['id']} reach you? {w.draw(PHRASES3)}"
        _mail(w, "news@shop.example", "Orders over $30 ship free this week", -1, 7)
        return {"cancelled": CANCELLED, "delivered": DELIVERED, "_id": target["id"], "_status": target["status"],
                "_to": asker["email"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        cancel = p["_status"] != "delivered"
        reply = Add("email", "emails", {"folder": "sent", "to": [p["_to"]], "body": CANCELLED if cancel else DELIVERED})
        return ([Update("shopping", "orders", p["_id"], {"status": "cancelled"})] if cancel else []) + [reply, EMAIL_READ]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        mails = yield from lookup(observe, call("email.search", query="order", folder="inbox"))
        asking = [(m, found.group(0)) for m in find_rows(mails) if (found := _ORDER_ID.search(m.get("body", "")))]
        if len(asking) != 1:
            return
        mail, order_id = asking[0]
        order = yield from lookup(observe, call("shopping.order_status", order_id=order_id))
        if not order:
            return
        if order["status"] in ("placed", "shipped"):
            yield call("shopping.cancel_order", order_id=order_id)
            yield call("email.reply", id=mail["id"], body=p["cancelled"])
        elif order["status"] == "delivered":
            yield call("email.reply", id=mail["id"], body=p["delivered"])


class PlaylistOpenerToRelation(WorldTemplate):
    name = "playlist_opener_to_relation"
    apps = ("music", "contacts", "messages")
    tier = "hard"
    chain = 2
    lookups = ("music.list_playlists", "music.get_track", "contacts.search")
    goal_template = "Text my {relation} the title of the song my '{playlist}' playlist opens with."

    def build(self, w: World) -> dict[str, Any]:
        relation, target, _ = w.related()
        artist = w.draw(ARTISTS)
        album = w.draw(ALBUMS3)
        titles = w.draw(SONGS, 3)
        tracks = [w.track(t, artist, album, w.rng.randint(2, 6)) for t in titles]
        name = w.draw(ALBUMS3)
        order = w.pick(tracks, 3)
        w.playlist(name, [t["id"] for t in order])
        w.playlist(f"{name} 2", [t["id"] for t in reversed(order)])
        return {"relation": relation, "playlist": name, "_phone": target["phone"], "_title": order[0]["title"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("messages", "messages", {"phone": p["_phone"], "direction": "out", "body": p["_title"]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        playlists = yield from lookup(observe, call("music.list_playlists"))
        playlist = one(playlists, name=p["playlist"])
        if not playlist or not playlist["track_ids"]:
            return
        track = yield from lookup(observe, call("music.get_track", id=playlist["track_ids"][0]))
        if not track:
            return
        person = yield from person_by_relation(observe, p["relation"])
        if person:
            yield call("messages.send", contact=person["name"], body=track["title"])


TEMPLATES = [ReplyLatestFromRelation, HotelNameToRelation, FavoriteForGuests, OrderQueryReply,
             PlaylistOpenerToRelation]
