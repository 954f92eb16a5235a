"""Every app's tools through SimPhone.call_tool: happy paths, typed errors, and the catalogue."""

from __future__ import annotations

from collections import Counter

import pytest

from devices.sim.phone import SimPhone
from schemas.actions import ToolCall


def ok(phone: SimPhone, name: str, /, **args):
    result = phone.call_tool(name, args)
    assert result.ok, result.error
    return result.value


def err(phone: SimPhone, name: str, code: str, /, **args) -> str:
    result = phone.call_tool(name, args)
    assert not result.ok and result.error is not None
    assert result.error.code == code, result.error
    return result.error.message


def test_catalogue_has_at_least_60_typed_tools_over_ten_apps(phone: SimPhone) -> None:
    assert len(phone.tools) >= 60
    per_app = Counter(spec.app for spec in phone.tools.values())
    assert set(per_app) == set(phone.apps) and len(phone.apps) >= 10
    for name, spec in phone.tools.items():
        assert name == f"{spec.app}.{name.split('.', 1)[1]}"
        assert spec.parameters["type"] == "object" and spec.parameters["additionalProperties"] is False
        assert set(spec.parameters["required"]) <= set(spec.parameters["properties"])
        assert spec.description and spec.returns


def test_unknown_tool_and_unknown_argument_are_typed(phone: SimPhone) -> None:
    assert "no tool 'contacts.teleport'" in err(phone, "contacts.teleport", "unknown_tool")
    assert "'nickname'" in err(phone, "contacts.get", "bad_arguments", id="ct1", nickname="x")
    assert "'query'" in err(phone, "contacts.search", "bad_arguments")
    assert "'id'" in err(phone, "contacts.get", "bad_arguments", id=5)


def test_contacts(phone: SimPhone) -> None:
    assert [c["name"] for c in ok(phone, "contacts.search", query="alice")] == ["Alice Chen"]
    new = ok(phone, "contacts.add", name="Zoe Park", phone="+1 555 0100", email="zoe@example.com")
    assert phone.state.row("contacts", "contacts", new["id"])["name"] == "Zoe Park"
    assert err(phone, "contacts.add", "conflict", name="zoe park", phone="123")
    assert "'phone'" in err(phone, "contacts.add", "bad_arguments", name="X", phone="call me")
    ok(phone, "contacts.update", id=new["id"], company="Acme")
    assert "at least one field" in err(phone, "contacts.update", "bad_arguments", id=new["id"])
    ok(phone, "contacts.star", id=new["id"], starred=True)
    assert phone.state.row("contacts", "contacts", new["id"])["starred"] is True
    assert new["id"] in [c["id"] for c in ok(phone, "contacts.list", starred=True)]
    ok(phone, "contacts.delete", id=new["id"])
    assert "'ct999'" in err(phone, "contacts.get", "not_found", id="ct999")
    assert phone.state.row("contacts", "contacts", new["id"]) is None


def test_calendar(phone: SimPhone) -> None:
    assert [e["id"] for e in ok(phone, "calendar.list_events", date="2026-01-05")] == ["ev3", "ev4"]
    event = ok(phone, "calendar.create_event", title="Demo", start="2026-01-05T14:00",
               end="2026-01-05T15:00", attendees=["Grace Liu"])
    assert event["attendees"] == ["Grace Liu"]
    assert "'end'" in err(phone, "calendar.create_event", "bad_arguments", title="x",
                          start="2026-01-05T14:00", end="2026-01-05T13:00")
    assert "'start'" in err(phone, "calendar.create_event", "bad_arguments", title="x",
                            start="tomorrow", end="2026-01-05T13:00")
    ok(phone, "calendar.update_event", id=event["id"], location="Room 1")
    assert ok(phone, "calendar.get_event", id=event["id"])["location"] == "Room 1"
    # 08:00-10:00 free before the 10:00 review; a 3-hour slot must come after lunch ends.
    assert ok(phone, "calendar.find_free_slot", date="2026-01-05", duration_min=60)["start"] == "2026-01-05T08:00"
    assert ok(phone, "calendar.find_free_slot", date="2026-01-05", duration_min=180)["start"] == "2026-01-05T15:00"
    assert ok(phone, "calendar.search", query="dentist")[0]["id"] == "ev2"
    ok(phone, "calendar.delete_event", id=event["id"])
    err(phone, "calendar.delete_event", "not_found", id=event["id"])


def test_messages(phone: SimPhone) -> None:
    sent = ok(phone, "messages.send", contact="bob martinez", body="hi Bob")
    assert sent["contact"] == "Bob Martinez" and sent["direction"] == "out"
    assert sent["phone"] == phone.state.row("contacts", "contacts", "ct2")["phone"]
    by_number = ok(phone, "messages.send", phone="+1 555 7777", body="hello")
    assert by_number["contact"] == "+1 555 7777"
    assert "'contact'" in err(phone, "messages.send", "bad_arguments", body="x")
    err(phone, "messages.send", "not_found", contact="Nobody Here", body="x")
    assert ok(phone, "messages.list", contact="Bob Martinez")[0]["body"] == "hi Bob"
    unread = ok(phone, "messages.list", unread=True)
    assert unread and all(not m["read"] for m in unread)
    ok(phone, "messages.mark_read", id=unread[0]["id"])
    assert phone.state.row("messages", "messages", unread[0]["id"])["read"] is True
    assert ok(phone, "messages.search", query="hi bob")[0]["id"] == sent["id"]
    ok(phone, "messages.delete", id=sent["id"])
    err(phone, "messages.get", "not_found", id=sent["id"])


def test_clock(phone: SimPhone) -> None:
    assert ok(phone, "clock.now")["now"] == "2026-01-01T08:00"
    alarm = ok(phone, "clock.set_alarm", time="07:15", label="Gym", days=["fri", "mon"])
    assert alarm["days"] == ["mon", "fri"] and alarm["enabled"] is True
    assert "'time'" in err(phone, "clock.set_alarm", "bad_arguments", time="25:00")
    assert "'days item'" in err(phone, "clock.set_alarm", "bad_arguments", time="07:00", days=["someday"])
    ok(phone, "clock.toggle_alarm", id=alarm["id"], enabled=False)
    assert phone.state.row("clock", "alarms", alarm["id"])["enabled"] is False
    ok(phone, "clock.update_alarm", id=alarm["id"], time="07:30")
    assert [a["time"] for a in ok(phone, "clock.list_alarms")] == ["06:30", "07:30", "08:00", "21:45"]
    ok(phone, "clock.delete_alarm", id=alarm["id"])
    timer = ok(phone, "clock.start_timer", seconds=300, label="tea")
    assert ok(phone, "clock.list_timers") == [timer]
    assert "at least 1" in err(phone, "clock.start_timer", "bad_arguments", seconds=0)
    ok(phone, "clock.cancel_timer", id=timer["id"])
    err(phone, "clock.cancel_timer", "not_found", id=timer["id"])


def test_notes(phone: SimPhone) -> None:
    note = ok(phone, "notes.create", title="Ideas", body="one")
    assert note["folder"] == "Notes" and note["pinned"] is False
    ok(phone, "notes.update", id=note["id"], append="two")
    assert phone.state.row("notes", "notes", note["id"])["body"] == "one\ntwo"
    ok(phone, "notes.pin", id=note["id"], pinned=True)
    assert ok(phone, "notes.list")[0]["pinned"] is True
    assert [n["title"] for n in ok(phone, "notes.search", query="sunflower")] == ["Wifi password"]
    assert [n["id"] for n in ok(phone, "notes.list", folder="work")] == ["nt3", "nt6"]
    err(phone, "notes.update", "bad_arguments", id=note["id"])
    ok(phone, "notes.delete", id=note["id"])
    err(phone, "notes.get", "not_found", id=note["id"])


def test_settings(phone: SimPhone) -> None:
    assert ok(phone, "settings.get", key="wifi") == {"key": "wifi", "value": True}
    assert ok(phone, "settings.toggle", key="wifi")["value"] is False
    ok(phone, "settings.set", key="brightness", value=35)
    assert phone.state.settings["brightness"] == 35
    assert "0 to 100" in err(phone, "settings.set", "bad_arguments", key="brightness", value=101)
    assert "true or false" in err(phone, "settings.set", "bad_arguments", key="dark_mode", value=3)
    assert "'key'" in err(phone, "settings.set", "bad_arguments", key="turbo", value=True)
    err(phone, "settings.toggle", "bad_arguments", key="brightness")
    assert ok(phone, "settings.list")["brightness"] == 35


def test_email(phone: SimPhone) -> None:
    inbox = ok(phone, "email.list")
    assert inbox and all(e["folder"] == "inbox" for e in inbox)
    sent = ok(phone, "email.send", to=["grace.liu@example.com"], subject="Hi", body="hello")
    assert sent["folder"] == "sent" and sent["sender"] == "me@example.com"
    assert "'to item'" in err(phone, "email.send", "bad_arguments", to=["not-an-address"], subject="x", body="")
    assert "'to'" in err(phone, "email.send", "bad_arguments", to=[], subject="x", body="")
    unread = ok(phone, "email.list", unread=True)[0]
    assert ok(phone, "email.read", id=unread["id"])["read"] is True
    reply = ok(phone, "email.reply", id=unread["id"], body="thanks")
    assert reply["to"] == [unread["sender"]] and reply["subject"].startswith("Re: ")
    err(phone, "email.reply", "conflict", id=sent["id"], body="again")
    ok(phone, "email.move", id=unread["id"], folder="archive")
    assert "'folder'" in err(phone, "email.move", "bad_arguments", id=unread["id"], folder="spam")
    ok(phone, "email.star", id=unread["id"])
    assert phone.state.row("email", "emails", unread["id"])["starred"] is True
    ok(phone, "email.draft", subject="Later")
    assert any(e["subject"] == "Later" for e in ok(phone, "email.list", folder="drafts"))
    ok(phone, "email.delete", id=sent["id"])
    assert phone.state.row("email", "emails", sent["id"])["folder"] == "trash"
    assert ok(phone, "email.search", query="LX318")[0]["subject"] == "Flight confirmation"


def test_maps(phone: SimPhone) -> None:
    found = ok(phone, "maps.search_places", query="restaurant")
    assert {p["name"] for p in found} == {"Green Bowl", "Golden Dragon"}
    ok(phone, "maps.save_place", place_id="pl2", list="Coffee")
    assert [s["place"]["name"] for s in ok(phone, "maps.list_saved", list="Coffee")] == ["Blue Door Cafe"]
    err(phone, "maps.save_place", "not_found", place_id="pl99", list="x")
    trip = ok(phone, "maps.navigate", destination="city gym", mode="walk")
    eta = ok(phone, "maps.eta", origin="Home", destination="City Gym", mode="walk")
    assert trip["eta_min"] == eta["eta_min"] > ok(phone, "maps.eta", origin="Home", destination="City Gym",
                                                  mode="drive")["eta_min"]
    assert "'mode'" in err(phone, "maps.navigate", "bad_arguments", destination="City Gym", mode="fly")
    err(phone, "maps.navigate", "not_found", destination="Atlantis", mode="drive")
    assert ok(phone, "maps.get_place", id="pl3")["name"] == "City Gym"
    assert len(ok(phone, "maps.list_trips")) == 2
    ok(phone, "maps.unsave_place", id="sv1")
    err(phone, "maps.unsave_place", "not_found", id="sv1")


def test_shopping(phone: SimPhone) -> None:
    assert ok(phone, "shopping.search", query="tea")[0]["name"] == "Green tea"
    product = ok(phone, "shopping.get_product", id="pr5")
    ok(phone, "shopping.add_to_cart", product_id="pr5", quantity=2)
    ok(phone, "shopping.add_to_cart", product_id="pr5")
    cart = ok(phone, "shopping.view_cart")
    assert cart["items"][0]["quantity"] == 3 and cart["total"] == round(product["price"] * 3, 2)
    err(phone, "shopping.add_to_cart", "conflict", product_id="pr3")  # out of stock
    assert "'quantity'" in err(phone, "shopping.add_to_cart", "bad_arguments", product_id="pr5", quantity=0)
    order = ok(phone, "shopping.checkout", address="1 Home St")
    assert order["items"] == [{"product_id": "pr5", "quantity": 3}] and order["status"] == "placed"
    assert phone.state.rows("shopping", "cart") == []
    assert phone.state.row("shopping", "products", "pr5")["stock"] == product["stock"] - 3
    err(phone, "shopping.checkout", "conflict", address="1 Home St")
    assert ok(phone, "shopping.order_status", order_id=order["id"])["status"] == "placed"
    ok(phone, "shopping.cancel_order", order_id=order["id"])
    err(phone, "shopping.cancel_order", "conflict", order_id="or1")
    err(phone, "shopping.remove_from_cart", "not_found", product_id="pr5")
    assert len(ok(phone, "shopping.list_orders")) == 2


def test_files(phone: SimPhone) -> None:
    photos = ok(phone, "files.list", kind="photo")
    assert photos and all(f["kind"] == "photo" for f in photos)
    assert [f["id"] for f in ok(phone, "files.search", query="sunset")] == ["f5"]
    ok(phone, "files.tag", id="f1", tag="summer")
    assert phone.state.row("files", "files", "f1")["tags"] == ["beach", "summer"]
    ok(phone, "files.untag", id="f1", tag="beach")
    err(phone, "files.untag", "not_found", id="f1", tag="beach")
    moved = ok(phone, "files.move", id="f1", album="Trips")
    assert moved["path"] == "/sdcard/Trips/IMG_0001.jpg"
    message = ok(phone, "files.share", id="f1", contact="Grace Liu")
    assert message["body"] == "[file] IMG_0001.jpg" and message["contact"] == "Grace Liu"
    err(phone, "files.share", "not_found", id="f1", contact="Nobody")
    ok(phone, "files.delete", id="f1")
    err(phone, "files.get", "not_found", id="f1")


def test_tool_call_action_logs_and_returns_result(phone: SimPhone) -> None:
    obs = phone.act(ToolCall(name="notes.create", arguments={"title": "A", "body": "b"}))
    assert obs.result.ok and obs.step == 1 and obs.clock_ms == 1_767_254_401_000
    bad = phone.act(ToolCall(name="notes.create", arguments={"title": ""}))
    assert bad.result.error.code == "bad_arguments"
    entries = [(e.kind, e.name, e.ok, e.step) for e in phone.state.log]
    assert entries == [("tool_call", "notes.create", True, 1), ("tool_call", "notes.create", False, 2)]


@pytest.mark.parametrize("name", ["contacts.get", "email.read", "files.get", "notes.get"])
def test_missing_records_are_not_found(phone: SimPhone, name: str) -> None:
    assert "'zz9'" in err(phone, name, "not_found", id="zz9")
