"""GUI flows on SimPhone that change state: forms, switches, x/y clicks, scrolling, navigation."""

from __future__ import annotations

from devices.sim.phone import SimPhone
from schemas import actions as act
from schemas.observations import Observation, UIElement


def find(obs: Observation, *, text: str | None = None, rid: str | None = None) -> int:
    """Index of the first element with this text or resource-id suffix."""
    for i, e in enumerate(obs.screen):
        if (text is not None and e.text == text) or (rid is not None and (e.resource_id or "").endswith(rid)):
            return i
    raise AssertionError(f"no element text={text!r} rid={rid!r} in {[e.text for e in obs.screen]}")


def test_every_app_has_a_list_and_a_detail_screen(phone: SimPhone) -> None:
    for app in phone.apps:
        obs = phone.act(act.OpenApp(app_name=app))
        assert obs.foreground_app == app
        assert all(e.package_name in (f"com.flywheel.{app}", "com.android.systemui") for e in obs.screen)
        item = find(obs, rid="/item")
        detail = phone.act(act.Click(index=item))
        if app != "settings":  # settings items toggle in place
            assert find(detail, rid="/up") >= 0, app
        phone.act(act.NavigateHome())


def test_home_screen_has_an_icon_per_app(phone: SimPhone) -> None:
    obs = phone.observe()
    assert obs.foreground_app == "home"
    labels = {e.text for e in obs.screen if e.is_clickable}
    assert {"Contacts", "Calendar", "Messages", "Clock", "Notes", "Settings", "Email", "Maps",
            "Shopping", "Files"} <= labels
    for e in obs.screen:
        assert e.bounds is not None and 0 <= e.bounds.left < e.bounds.right <= 1080
        assert 0 <= e.bounds.top < e.bounds.bottom <= 2400


def test_create_a_contact_by_clicking_and_typing(phone: SimPhone) -> None:
    obs = phone.act(act.OpenApp(app_name="Contacts"))
    obs = phone.act(act.Click(index=find(obs, text="Add")))
    obs = phone.act(act.InputText(index=find(obs, rid="/name"), text="Zoe Park"))
    obs = phone.act(act.InputText(index=find(obs, rid="/phone"), text="+1 555 0100"))
    obs = phone.act(act.Click(index=find(obs, text="Save")))
    assert obs.message == "Contact saved."
    created = [r for r in phone.state.rows("contacts", "contacts") if r["name"] == "Zoe Park"]
    assert created and created[0]["phone"] == "+1 555 0100"
    assert obs.screen[find(obs, rid="/toolbar_title")].text == "Zoe Park"
    kinds = {(e.kind, e.name) for e in phone.state.log}
    assert ("gui", "input_text") in kinds and not any(e.kind == "tool_call" for e in phone.state.log)


def test_a_bad_form_stays_open_with_an_error(phone: SimPhone) -> None:
    obs = phone.act(act.OpenApp(app_name="Contacts"))
    obs = phone.act(act.Click(index=find(obs, text="Add")))
    obs = phone.act(act.InputText(index=find(obs, rid="/name"), text="No Phone"))
    obs = phone.act(act.Click(index=find(obs, text="Save")))
    assert "'phone'" in obs.message
    assert obs.screen[find(obs, rid="/toolbar_title")].text == "New contact"
    assert len(phone.state.rows("contacts", "contacts")) == 10


def test_create_a_note_and_pin_it(phone: SimPhone) -> None:
    obs = phone.act(act.OpenApp(app_name="notes"))
    obs = phone.act(act.Click(index=find(obs, text="Add")))
    obs = phone.act(act.Click(index=find(obs, rid="/title")))
    obs = phone.act(act.InputText(text="Trip"))              # types into the focused field
    obs = phone.act(act.InputText(index=find(obs, rid="/body"), text="pack"))
    obs = phone.act(act.InputText(index=find(obs, rid="/body"), text=" bags", clear=False))
    obs = phone.act(act.Click(index=find(obs, text="Save")))
    note = next(r for r in phone.state.rows("notes", "notes") if r["title"] == "Trip")
    assert note["body"] == "pack bags" and note["folder"] == "Notes"
    obs = phone.act(act.Click(index=find(obs, text="Pinned")))
    assert phone.state.row("notes", "notes", note["id"])["pinned"] is True
    assert obs.screen[find(obs, text="Pinned")].is_checked


def test_toggle_a_setting_and_set_brightness(phone: SimPhone) -> None:
    obs = phone.act(act.OpenApp(app_name="Settings"))
    wifi_switch = find(obs, text="Wi-Fi") + 2
    assert obs.screen[wifi_switch].is_checkable and obs.screen[wifi_switch].is_checked
    obs = phone.act(act.Click(index=wifi_switch))
    assert phone.state.settings["wifi"] is False and not obs.screen[wifi_switch].is_checked
    obs = phone.act(act.Click(index=find(obs, text="Brightness")))
    obs = phone.act(act.InputText(index=find(obs, rid="/value"), text="25"))
    obs = phone.act(act.Click(index=find(obs, text="Save")))
    assert phone.state.settings["brightness"] == 25 and obs.message == "Brightness set to 25."


def test_alarm_switch_and_new_alarm(phone: SimPhone) -> None:
    obs = phone.act(act.OpenApp(app_name="alarm"))
    switch = next(i for i, e in enumerate(obs.screen) if e.class_name == "android.widget.Switch")
    obs = phone.act(act.Click(index=switch))
    assert phone.state.row("clock", "alarms", "al1")["enabled"] is False
    obs = phone.act(act.Click(index=find(obs, text="Add alarm")))
    obs = phone.act(act.InputText(index=find(obs, rid="/time"), text="05:45"))
    obs = phone.act(act.InputText(index=find(obs, rid="/days"), text="Mon, Wed"))
    obs = phone.act(act.Click(index=find(obs, text="Save")))
    new = [a for a in phone.state.rows("clock", "alarms") if a["time"] == "05:45"]
    assert new and new[0]["days"] == ["mon", "wed"] and new[0]["enabled"]


def test_click_by_xy_hits_the_element_under_the_point(phone: SimPhone) -> None:
    obs = phone.observe()
    notes_icon: UIElement = obs.screen[find(obs, text="Notes")]
    x, y = notes_icon.bounds.center
    assert phone.act(act.Click(x=x, y=y)).foreground_app == "notes"
    obs = phone.observe()
    bob = obs.screen[find(obs, text="Gift ideas")]
    obs = phone.act(act.Click(x=bob.bounds.left + 5, y=bob.bounds.top + 5))
    assert obs.screen[find(obs, rid="/toolbar_title")].text == "Gift ideas"
    miss = phone.act(act.Click(x=5, y=5))  # the status bar is not touchable
    assert miss.result is not None and miss.result.error.code == "bad_arguments"


def test_scroll_reveals_the_rest_of_a_list(phone: SimPhone) -> None:
    obs = phone.act(act.OpenApp(app_name="Contacts"))
    names = {e.text for e in obs.screen}
    assert "Jamal Wright" not in names
    obs = phone.act(act.Scroll(direction="down"))
    assert "Jamal Wright" in {e.text for e in obs.screen}
    obs = phone.act(act.Scroll(direction="down"))
    assert obs.message == "Already at the end of the list."
    obs = phone.act(act.Swipe(direction="down"))  # finger down = content back up
    assert "Alice Chen" in {e.text for e in obs.screen}


def test_search_field_filters_the_list(phone: SimPhone) -> None:
    obs = phone.act(act.OpenApp(app_name="Files"))
    obs = phone.act(act.InputText(index=find(obs, rid="/search"), text="lisbon"))
    obs = phone.act(act.KeyboardEnter())
    titles = [e.text for e in obs.screen if (e.resource_id or "").endswith("/item_title")]
    assert titles == ["IMG_0005.jpg"]


def test_long_press_stars_a_contact(phone: SimPhone) -> None:
    obs = phone.act(act.OpenApp(app_name="Contacts"))
    obs = phone.act(act.LongPress(index=find(obs, text="Bob Martinez")))
    assert obs.message == "Starred." and phone.state.row("contacts", "contacts", "ct2")["starred"]


def test_back_home_and_unknown_app(phone: SimPhone) -> None:
    obs = phone.act(act.OpenApp(app_name="Email"))
    obs = phone.act(act.Click(index=find(obs, rid="/item")))
    assert phone.act(act.NavigateBack()).screen[find(phone.observe(), rid="/toolbar_title")].text == "Inbox"
    assert phone.act(act.NavigateBack()).foreground_app == "home"
    phone.act(act.OpenApp(app_name="Maps"))
    assert phone.act(act.NavigateHome()).foreground_app == "home"
    bad = phone.act(act.OpenApp(app_name="Horoscope"))
    assert bad.result.error.code == "bad_arguments" and "Horoscope" in bad.message


def test_opening_an_email_marks_it_read(phone: SimPhone) -> None:
    unread = [r["id"] for r in phone.state.rows("email", "emails") if not r["read"]]
    obs = phone.act(act.OpenApp(app_name="Email"))
    subject = phone.state.row("email", "emails", unread[0])["subject"]
    phone.act(act.Click(index=find(obs, text=subject)))
    assert phone.state.row("email", "emails", unread[0])["read"] is True


def test_input_into_a_label_is_an_error(phone: SimPhone) -> None:
    obs = phone.act(act.OpenApp(app_name="Contacts"))
    bad = phone.act(act.InputText(index=find(obs, rid="/toolbar_title"), text="x"))
    assert bad.result.error.code == "bad_arguments" and "not a text field" in bad.message
    out_of_range = phone.act(act.Click(index=999))
    assert "no element 999" in out_of_range.message
