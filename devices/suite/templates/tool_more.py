"""More tool templates: clean-ups over several rows (every matching row and only those), and
multi-app errands whose later calls use ids an earlier call returned."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from devices.suite.diff import Add, Remove, Update
from devices.suite.templates._vocab import (
    ALBUMS3,
    CITIES,
    COMPANIES3,
    DISHES,
    PLACES3,
    PRODUCTS3,
    TAGS3,
    TOPICS3,
)
from devices.suite.templates._world import (
    CART,
    RELATIONS,
    STOCK,
    World,
    WorldTemplate,
    balance_of,
    call,
    find_rows,
    finish,
    last_order,
    lookup,
    note_titled,
    one,
    person_by_relation,
    tagged,
)

__all__ = ["TEMPLATES"]


class TrashOlderTopicEmails(WorldTemplate):
    name = "trash_older_topic_emails"
    apps = ("email",)
    tier = "medium"
    chain = 1
    lookups = ("email.search",)
    goal_template = "Bin every email about the {topic} except the newest one."

    def build(self, w: World) -> dict[str, Any]:
        topic, other = w.draw(TOPICS3, 2)
        rows = []
        for day in w.rng.sample(range(1, 20), w.rng.randint(3, 4)):
            person = w.contact()
            rows.append(w.email(person["email"], f"Re: the {topic}", f"More on the {topic}.", f"{w.day(-day)}T10:00",
                                read=True))
        w.email("x@mail.example", f"Re: the {other}", "Unrelated.", f"{w.day(-30)}T10:00", read=True)
        rows.sort(key=lambda r: r["received_at"])
        return {"topic": topic, "_bin": [r["id"] for r in rows[:-1]]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("email", "emails", i, {"folder": "trash"}) for i in p["_bin"]]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("email.search", query=p["topic"], folder="inbox"))
        found = sorted(find_rows(rows), key=lambda r: r["received_at"])
        for mail in found[:-1]:
            yield call("email.delete", id=mail["id"])


class RenameAndPrunePlaylists(WorldTemplate):
    name = "rename_and_prune_playlists"
    apps = ("music",)
    tier = "hard"
    chain = 1
    lookups = ("music.list_playlists",)
    goal_template = "Rename my '{old}' playlist to '{new}' and delete every empty playlist."

    def build(self, w: World) -> dict[str, Any]:
        old, new, *empty = w.draw(TOPICS3, 4)
        track = w.track("Filler", "Various", "Mix", 3)
        keep = w.playlist(old.title(), [track["id"]])
        gone = [w.playlist(n.title(), []) for n in empty]
        return {"old": old.title(), "new": new.title(), "_keep": keep["id"], "_gone": [g["id"] for g in gone]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        empty = [r["id"] for r in before.rows("music", "playlists") if not r["track_ids"]]
        return [Update("music", "playlists", p["_keep"], {"name": p["new"]}),
                *(Remove("music", "playlists", i) for i in empty)]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("music.list_playlists"))
        target = one(rows, name=p["old"])
        if not target:
            return
        yield call("music.rename_playlist", id=target["id"], name=p["new"])
        for playlist in find_rows(rows):
            if not playlist["track_ids"]:
                yield call("music.delete_playlist", id=playlist["id"])


class CancelTimerFor(WorldTemplate):
    name = "cancel_timer_for"
    apps = ("clock",)
    tier = "easy"
    chain = 1
    lookups = ("clock.list_timers",)
    # Two timers carry the dish's label, so matching the label alone is a coin toss: the one
    # with more time left is the one to cancel.
    goal_template = "Cancel the {thing} timer with the most time left; the others keep running."

    def build(self, w: World) -> dict[str, Any]:
        thing, minutes = w.nth(DISHES, range(15, 95, 10))
        others = w.other(DISHES, thing, 2)
        shorter = w.rng.randint(2, minutes - 5)
        rows = {d: w.add("clock", "timers", "tm", seconds=(minutes if d == thing else w.rng.randint(3, 90)) * 60,
                         label=d.lower()) for d in (thing, *others)}
        w.add("clock", "timers", "tm", seconds=shorter * 60, label=thing.lower())
        return {"thing": thing.lower(), "_id": rows[thing]["id"], "_minutes": minutes}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Remove("clock", "timers", p["_id"])]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("clock.list_timers"))
        mine = [r for r in find_rows(rows) if r.get("label") == p["thing"]]
        if mine:
            longest = max(mine, key=lambda r: r.get("seconds_left", r.get("seconds", 0)))
            yield call("clock.cancel_timer", id=longest["id"])


class DeleteOffAlarms(WorldTemplate):
    name = "delete_off_alarms"
    apps = ("clock",)
    tier = "hard"
    chain = 1
    test_only = True
    lookups = ("clock.list_alarms",)
    goal_template = "Delete every alarm that is switched off, but keep the '{label}' one."

    def build(self, w: World) -> dict[str, Any]:
        label, n_off, kept_at = w.nth(TOPICS3, (1, 2, 3), ("06:10", "06:40"))
        others = w.other(TOPICS3, label, n_off + 1)
        w.add("clock", "alarms", "al", time=kept_at, label=label.title(), enabled=False, days=[])
        for i, name in enumerate(others):
            w.add("clock", "alarms", "al", time=f"0{5 + i}:{w.pick(['05', '25', '55'])}", label=name.title(),
                  enabled=i == 0, days=[])
        return {"label": label.title(), "_others": others, "_kept_at": kept_at}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Remove("clock", "alarms", r["id"]) for r in before.rows("clock", "alarms")
                if not r["enabled"] and r["label"] != p["label"]]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("clock.list_alarms"))
        for alarm in find_rows(rows, enabled=False):
            if alarm["label"] != p["label"]:
                yield call("clock.delete_alarm", id=alarm["id"])


class PinNoteDropOld(WorldTemplate):
    name = "pin_note_drop_old"
    apps = ("notes",)
    tier = "medium"
    chain = 1
    lookups = ("notes.list",)
    goal_template = "Pin my '{topic}' note and delete the old copy of it."

    def build(self, w: World) -> dict[str, Any]:
        topic, other = w.draw(TOPICS3, 2)
        folder = w.pick(["Personal", "Work", "Ideas"])
        keep = w.note(topic.capitalize(), "Current.", folder)
        old = w.note(f"{topic.capitalize()} (old copy)", "Outdated.", folder)
        w.note(f"{other.capitalize()} (old copy)", "Outdated.", folder)
        return {"topic": topic.capitalize(), "_keep": keep["id"], "_old": old["id"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("notes", "notes", p["_keep"], {"pinned": True}), Remove("notes", "notes", p["_old"])]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("notes.list"))
        keep, old = one(rows, title=p["topic"]), one(rows, title=f"{p['topic']} (old copy)")
        if keep and old:
            yield call("notes.pin", id=keep["id"], pinned=True)
            yield call("notes.delete", id=old["id"])


class ClearSavedList(WorldTemplate):
    name = "clear_saved_list"
    apps = ("maps",)
    tier = "medium"
    chain = 1
    lookups = ("maps.list_saved",)
    goal_template = "Clear my '{listname}' list in maps; leave the places saved in other lists."

    def build(self, w: World) -> dict[str, Any]:
        listname, other = (n.title() for n in w.draw(TOPICS3, 2))
        places = [w.place(n, "2 Dock Rd", 4.0) for n in w.draw(PLACES3, 3)]
        gone = [w.add("maps", "saved", "sv", place_id=pl["id"], list=listname)["id"]
                for pl in places[:w.rng.randint(1, 3)]]
        w.add("maps", "saved", "sv", place_id=places[0]["id"], list=other)
        return {"listname": listname, "_gone": gone}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Remove("maps", "saved", i) for i in p["_gone"]]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("maps.list_saved", list=p["listname"]))
        for saved in find_rows(rows, list=p["listname"]):
            yield call("maps.unsave_place", id=saved["id"])


class TrimCartAndOrder(WorldTemplate):
    name = "trim_cart_and_order"
    apps = ("shopping",)
    tier = "hard"
    chain = 1
    lookups = ("shopping.view_cart",)
    goal_template = ("Take everything over ${cap} out of my cart, then order the rest to the address "
                     "of my last order.")

    def build(self, w: World) -> dict[str, Any]:
        cap = w.pick([20, 25, 30])
        keep, drop = [], []
        for name in w.draw(PRODUCTS3, 4):
            price = w.money(5, cap - 1) if len(keep) < 2 else w.money(cap + 1, 80)
            row = w.product(name.title(), price, 20)
            qty = w.rng.randint(1, 2)
            w.add("shopping", "cart", "ci", product_id=row["id"], quantity=qty)
            (keep if price <= cap else drop).append({"product_id": row["id"], "quantity": qty})
        street = f"{w.rng.randint(1, 99)} {w.pick(['Harbor', 'Orchard', 'Ferry'])} Lane"
        w.order([], 3.0, street, w.day(-6))
        return {"cap": cap, "_items": keep, "_address": street}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("shopping", "orders", {"items": p["_items"], "address": p["_address"]}), STOCK, CART]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        cart = yield from lookup(observe, call("shopping.view_cart"))
        orders = yield from lookup(observe, call("shopping.list_orders"))
        last = last_order(orders)
        if not cart or not last:
            return
        for line in cart["items"]:
            if line["price"] > p["cap"]:
                yield call("shopping.remove_from_cart", product_id=line["product_id"])
        yield call("shopping.checkout", address=last["address"])


class DeleteTextsFromRelation(WorldTemplate):
    name = "delete_texts_from_relation"
    apps = ("contacts", "messages")
    tier = "hard"
    chain = 2
    lookups = ("contacts.search", "messages.list")
    goal_template = "Delete the texts my {relation} sent me about the {topic}; keep the rest."

    def build(self, w: World) -> dict[str, Any]:
        relation, target, everyone = w.related()
        topic, other = w.draw(TOPICS3, 2)
        gone = []
        for i in range(w.rng.randint(2, 3)):
            gone.append(w.text(target, f"About the {topic}, part {i + 1}", f"{w.day(-i)}T09:0{i}", read=True)["id"])
        w.text(target, f"About the {other}", f"{w.day(-1)}T10:00", read=True)
        w.text(everyone[1], f"About the {topic}", f"{w.day(-1)}T11:00", read=True)
        return {"relation": relation, "topic": topic, "_gone": gone}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Remove("messages", "messages", i) for i in p["_gone"]]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        person = yield from person_by_relation(observe, p["relation"])
        if not person:
            return
        texts = yield from lookup(observe, call("messages.list", contact=person["name"]))
        for text in find_rows(texts, direction="in"):
            if p["topic"] in text["body"]:
                yield call("messages.delete", id=text["id"])


class NewPayeeFromRichest(WorldTemplate):
    name = "new_payee_from_richest"
    apps = ("bank",)
    tier = "medium"
    chain = 1
    lookups = ("bank.list_accounts",)
    goal_template = ("Save {company} as a payee (IBAN {iban}) and pay them ${amount} from whichever of my "
                     "accounts holds the most money.")

    def build(self, w: World) -> dict[str, Any]:
        company = w.draw(COMPANIES3)
        accounts = [w.add("bank", "accounts", "ac", name=n, number="•••• 0000", balance=w.money(12_000, 40_000),
                          currency="USD") for n in ("Reserve", "Business")]
        richest = max(accounts, key=lambda a: a["balance"])
        iban = f"NL{w.rng.randrange(10 ** 16):016d}"
        return {"company": company, "iban": iban, "amount": w.rng.randint(20, 400), "_from": richest["id"]}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("bank", "payees", {"name": p["company"], "iban": p["iban"]}),
                Add("bank", "payments", {"from_account": p["_from"], "amount": p["amount"]}),
                balance_of(p["_from"])]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        payee = yield from lookup(observe, call("bank.add_payee", name=p["company"], iban=p["iban"]))
        accounts = yield from lookup(observe, call("bank.list_accounts"))
        if payee and accounts:
            richest = max(find_rows(accounts), key=lambda a: a["balance"])
            yield call("bank.pay", payee_id=payee["id"], from_account=richest["id"], amount=p["amount"])


class DropRainyCities(WorldTemplate):
    name = "drop_rainy_cities"
    apps = ("weather",)
    tier = "hard"
    chain = 2
    test_only = True
    lookups = ("weather.list_saved", "weather.current")
    goal_template = "Take every saved city where it's raining today off my weather list."

    def build(self, w: World) -> dict[str, Any]:
        names = w.draw(CITIES, 4)
        rainy = set(w.rng.sample(names[:3], w.rng.randint(1, 2)))
        gone = []
        for i, name in enumerate(names):
            days = [{"date": w.day(k), "high": 15, "low": 5,
                     "condition": "rain" if (k == 0 and name in rainy) else "cloudy",
                     "rain_pct": 80 if (k == 0 and name in rainy) else 10} for k in range(-1, 3)]
            row = w.add("weather", "cities", "wc", name=name, saved=i < 3, days=days)
            if name in rainy:
                gone.append(row["id"])
        return {"_gone": gone, "_rainy": sorted(rainy)}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        today = datetime.fromtimestamp(before.clock_ms / 1000, UTC).strftime("%Y-%m-%d")
        return [Update("weather", "cities", c["id"], {"saved": False}) for c in before.rows("weather", "cities")
                if c["saved"] and any(d["date"] == today and d["condition"] == "rain" for d in c["days"])]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        saved = yield from lookup(observe, call("weather.list_saved"))
        for city in find_rows(saved):
            today = yield from lookup(observe, call("weather.current", city=city["name"]))
            if today and today["condition"] == "rain":
                yield call("weather.remove_city", city=city["name"])


class UntagAlbum(WorldTemplate):
    name = "untag_album"
    apps = ("files",)
    tier = "hard"
    chain = 1
    lookups = ("files.list",)
    goal_template = "Remove the '{tag}' tag from every photo in my {album} album."

    def build(self, w: World) -> dict[str, Any]:
        tag, other = w.draw(TAGS3, 2)
        album, elsewhere = w.draw(ALBUMS3, 2)
        ids = []
        for i in range(5):
            where = album if i < 4 else elsewhere
            tags = [tag, other] if i in (0, 1) else [tag] if i in (2, 4) else [other]
            name = f"IMG_{w.rng.randint(1000, 9999)}.jpg"
            row = w.photo(name, where, tags, 900, f"{w.day(-i - 1)}T09:00")
            if where == album and tag in tags:
                ids.append([row["id"], [t for t in tags if t != tag]])
        return {"tag": tag, "album": album, "_left": ids}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("files", "files", i, {"tags": left}) for i, left in p["_left"]]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("files.list", album=p["album"], kind="photo"))
        for row in tagged(rows, p["tag"]):
            yield call("files.untag", id=row["id"], tag=p["tag"])


class AcknowledgeCompanyEmails(WorldTemplate):
    name = "acknowledge_company_emails"
    apps = ("email",)
    tier = "hard"
    chain = 1
    lookups = ("email.list",)
    goal_template = ("Open each unread email in my inbox from {company} and reply \"{phrase}\" to it; "
                     "leave the other unread mail alone.")

    def build(self, w: World) -> dict[str, Any]:
        company, other = w.draw(COMPANIES3, 2)
        phrase = w.pick(["Received, thanks", "Noted, will follow up", "Thanks, on it"])
        domain, elsewhere = (f"{c.split()[0].lower()}.example" for c in (company, other))
        mine = []
        for i in range(w.rng.randint(2, 3)):
            row = w.email(f"team{i}@{domain}", f"{company} update {i + 1}", "Please confirm.",
                          f"{w.day(-i)}T08:{10 + i}")
            mine.append([row["id"], row["sender"]])
        w.email(f"old@{domain}", f"{company} archive", "Old.", f"{w.day(-9)}T08:00", read=True)
        w.email(f"news@{elsewhere}", f"{other} update", "Please confirm.", f"{w.day(-1)}T09:00")
        return {"company": company, "phrase": phrase, "_mine": mine}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [e for i, sender in p["_mine"] for e in (
            Update("email", "emails", i, {"read": True}),
            Add("email", "emails", {"folder": "sent", "to": [sender], "body": p["phrase"]}))]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("email.list", folder="inbox", unread=True))
        domain = f"@{p['company'].split()[0].lower()}.example"
        for mail in find_rows(rows):
            if mail["sender"].endswith(domain):
                yield call("email.read", id=mail["id"])
                yield call("email.reply", id=mail["id"], body=p["phrase"])


class ReadTextsFromRelation(WorldTemplate):
    name = "read_texts_from_relation"
    apps = ("contacts", "messages")
    tier = "hard"
    chain = 2
    lookups = ("contacts.search", "messages.list")
    goal_template = "Mark everything my {relation} texted me as read, but nobody else's texts."

    def build(self, w: World) -> dict[str, Any]:
        relation, n = w.nth(RELATIONS, (2, 3))
        target, everyone = w.people(relation)
        ids = [w.text(target, f"Message {i + 1}", f"{w.day(-i)}T12:0{i}")["id"] for i in range(n)]
        w.text(everyone[1], "From a namesake", f"{w.day(-1)}T13:00")
        return {"relation": relation, "_ids": ids}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Update("messages", "messages", i, {"read": True}) for i in p["_ids"]]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        person = yield from person_by_relation(observe, p["relation"])
        if not person:
            return
        texts = yield from lookup(observe, call("messages.list", contact=person["name"], unread=True))
        for text in find_rows(texts):
            yield call("messages.mark_read", id=text["id"])


class DraftNoteToRelation(WorldTemplate):
    name = "draft_note_to_relation"
    apps = ("contacts", "notes", "email")
    tier = "medium"
    chain = 1
    test_only = True
    lookups = ("contacts.search", "notes.search")
    goal_template = ("Draft, but don't send, an email to my {relation} with my '{topic}' note as its text "
                     "and the note's title as its subject.")

    def build(self, w: World) -> dict[str, Any]:
        relation, topic = w.nth(RELATIONS, TOPICS3)
        target, _ = w.people(relation)
        body = f"Items: {', '.join(w.draw(PRODUCTS3, 2))}"
        w.note(topic.capitalize(), body)
        w.note(f"{topic.capitalize()} ideas", "Later.")
        return {"relation": relation, "topic": topic.capitalize(), "_email": target["email"], "_body": body}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Add("email", "emails", {"folder": "drafts", "to": [p["_email"]], "subject": p["topic"],
                                        "body": p["_body"]})]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        person = yield from person_by_relation(observe, p["relation"])
        note = yield from note_titled(observe, p["topic"])
        if person and note:
            yield call("email.draft", to=[person["email"]], subject=note["title"], body=note["body"])


class DeleteAlbumScreenshots(WorldTemplate):
    name = "delete_album_screenshots"
    apps = ("files",)
    tier = "medium"
    chain = 1
    lookups = ("files.list",)
    goal_template = "Delete the screenshots in my {album} album; keep its photos and other albums' screenshots."

    def build(self, w: World) -> dict[str, Any]:
        album, other = w.draw(ALBUMS3, 2)
        n = w.rng.randint(2, 3)
        ids = []
        for i in range(n + 3):
            where = album if i < n + 2 else other
            shot = i < n or i == n + 2
            name = f"Screenshot_{w.rng.randint(1000, 9999)}.png" if shot else f"IMG_{w.rng.randint(1000, 9999)}.jpg"
            row = w.photo(name, where, [], 300, f"{w.day(-i - 1)}T09:00")
            if shot and where == album:
                ids.append(row["id"])
        return {"album": album, "_ids": ids}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        return [Remove("files", "files", i) for i in p["_ids"]]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        rows = yield from lookup(observe, call("files.list", album=p["album"]))
        for row in find_rows(rows):
            if row["name"].startswith("Screenshot_"):
                yield call("files.delete", id=row["id"])


class PaidToPayee(WorldTemplate):
    name = "paid_to_payee"
    apps = ("bank",)
    tier = "medium"
    chain = 1
    checker = "state_and_answer"
    lookups = ("bank.list_payees", "bank.list_payments")
    goal_template = "How much have I paid {company} in total through my saved payee? Two decimals, please."

    def build(self, w: World) -> dict[str, Any]:
        company, other = w.draw(COMPANIES3, 2)
        account = w.add("bank", "accounts", "ac", name="Bills", number="•••• 4242", balance=900.0, currency="USD")
        payee = w.payee(company, f"FR{w.rng.randrange(10 ** 20):020d}")
        decoy = w.payee(other, f"FR{w.rng.randrange(10 ** 20):020d}")
        total = 0.0
        for i in range(w.rng.randint(2, 4)):
            amount = w.money(10, 200)
            total += amount
            w.add("bank", "payments", "pm", from_account=account["id"], to=payee["id"], amount=amount,
                  memo=f"{company} bill", date=w.day(-7 * (i + 1)))
        w.add("bank", "payments", "pm", from_account=account["id"], to=decoy["id"], amount=w.money(10, 200),
              memo=f"{company} referral", date=w.day(-3))
        return {"company": company, "_total": round(total, 2)}

    def expect(self, p: dict[str, Any], before: Any) -> list[Any]:
        from devices.suite.diff import AnswerIs

        return [AnswerIs(p["_total"])]

    def solve(self, p: dict[str, Any], observe: Any) -> Any:
        payees = yield from lookup(observe, call("bank.list_payees", query=p["company"]))
        payee = one(payees, name=p["company"])
        if not payee:
            return
        payments = yield from lookup(observe, call("bank.list_payments"))
        if payments is not None:
            yield finish(f"{sum(r['amount'] for r in find_rows(payments, to=payee['id'])):.2f}")


TEMPLATES = [TrashOlderTopicEmails, RenameAndPrunePlaylists, CancelTimerFor, DeleteOffAlarms, PinNoteDropOld,
             ClearSavedList, TrimCartAndOrder, DeleteTextsFromRelation, NewPayeeFromRichest, DropRainyCities,
             UntagAlbum, AcknowledgeCompanyEmails, ReadTextsFromRelation, DraftNoteToRelation,
             DeleteAlbumScreenshots, PaidToPayee]
