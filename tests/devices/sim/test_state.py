"""SimState: initial_state overlay, determinism, and snapshot/restore/fork independence."""

from __future__ import annotations

import pytest

from devices.protocol import Device
from devices.sim.phone import SimPhone
from devices.sim.state import InitialStateError
from schemas.actions import Click, InputText, OpenApp, ToolCall
from tests.devices.sim.conftest import make_task

SCRIPT = [
    ToolCall(name="contacts.add", arguments={"name": "Zoe Park", "phone": "555-0100"}),
    OpenApp(app_name="Notes"), Click(index=2), InputText(index=3, text="Plan"),
    ToolCall(name="settings.toggle", arguments={"key": "bluetooth"}),
    ToolCall(name="shopping.add_to_cart", arguments={"product_id": "pr1", "quantity": 2}),
]


def run_script(phone: SimPhone) -> list[dict]:
    return [phone.act(a).model_dump(mode="json") for a in SCRIPT]


def test_simphone_implements_the_device_protocol() -> None:
    assert isinstance(SimPhone(), Device)


def test_initial_state_overlays_default_world() -> None:
    phone = SimPhone()
    phone.reset(make_task({
        "contacts": {"contacts": [{"id": "ct1", "name": "Alicia Chen", "phone": "1", "email": "",
                                   "company": "", "starred": False},
                                  {"name": "New Person", "phone": "2", "email": "", "company": "",
                                   "starred": False}]},
        "settings": {"dark_mode": True}, "memory": {"favourite_color": "teal"},
        "user": {"answers": {"birthday": "May 3"}},
    }))
    rows = phone.state.rows("contacts", "contacts")
    assert rows[0]["name"] == "Alicia Chen" and len(rows) == 11
    assert rows[-1]["id"] == "ct11" and rows[-1]["name"] == "New Person"
    assert phone.state.settings["dark_mode"] is True and phone.state.settings["wifi"] is True
    assert phone.state.memory == {"favourite_color": "teal"}
    assert phone.state.user_answers == {"birthday": "May 3"}
    # new rows after the overlay get fresh ids
    added = phone.call_tool("contacts.add", {"name": "Yet Another", "phone": "555-0103"})
    assert added.value["id"] == "ct12"


@pytest.mark.parametrize("initial, word", [
    ({"horoscope": {}}, "unknown app 'horoscope'"),
    ({"contacts": {"people": []}}, "unknown table 'contacts.people'"),
    ({"settings": {"turbo": True}}, "unknown setting 'turbo'"),
    ({"notes": {"notes": ["not a row"]}}, "list of objects"),
])
def test_bad_initial_state_names_the_problem(initial: dict, word: str) -> None:
    with pytest.raises(InitialStateError, match=word):
        SimPhone().reset(make_task(initial))


def test_reset_forgets_the_previous_episode(phone: SimPhone) -> None:
    run_script(phone)
    phone.reset(make_task())
    fresh = SimPhone()
    fresh.reset(make_task())
    assert phone.state.fingerprint() == fresh.state.fingerprint()
    assert phone.state.log == [] and phone.observe().step == 0


def test_same_seed_gives_identical_state_and_observations() -> None:
    a, b = SimPhone(fault_rate=0.3, fault_seed=5), SimPhone(fault_rate=0.3, fault_seed=5)
    a.reset(make_task(seed=3))
    b.reset(make_task(seed=3))
    assert run_script(a) == run_script(b)
    assert a.state.fingerprint() == b.state.fingerprint()


def test_snapshot_restore_brings_everything_back(phone: SimPhone) -> None:
    snap = phone.snapshot()
    before = phone.state.fingerprint()
    run_script(phone)
    assert phone.state.fingerprint() != before
    phone.restore(snap)
    assert phone.state.fingerprint() == before
    # the snapshot is still usable after the restored phone moves on again
    run_script(phone)
    phone.restore(snap)
    assert phone.state.fingerprint() == before


def test_fork_is_independent_of_its_parent(phone: SimPhone) -> None:
    phone.act(ToolCall(name="notes.create", arguments={"title": "shared", "body": ""}))
    parent_before = phone.state.fingerprint()
    child = phone.fork()
    assert child.device_id != phone.device_id
    assert child.state.fingerprint() == parent_before
    run_script(child)
    child.call_tool("contacts.delete", {"id": "ct1"})
    assert phone.state.fingerprint() == parent_before
    assert phone.state.row("contacts", "contacts", "ct1") is not None
    assert child.state.row("contacts", "contacts", "ct1") is None
    # and the parent's writes do not leak into the child
    phone.call_tool("notes.delete", {"id": "nt1"})
    assert child.state.row("notes", "notes", "nt1") is not None


def test_snapshot_shares_unwritten_tables(phone: SimPhone) -> None:
    snap = phone.snapshot()
    phone.call_tool("notes.create", {"title": "x", "body": ""})
    live = phone.state
    assert live.table("contacts", "contacts") is snap.state.tables["contacts.contacts"]
    assert live.table("notes", "notes") is not snap.state.tables["notes.notes"]


def test_rows_are_copies(phone: SimPhone) -> None:
    rows = phone.state.rows("calendar", "events")
    rows[0]["attendees"].append("Mallory")
    rows[0]["title"] = "changed"
    again = phone.state.row("calendar", "events", rows[0]["id"])
    assert "Mallory" not in again["attendees"] and again["title"] != "changed"
    value = phone.call_tool("calendar.get_event", {"id": "ev1"}).value
    value["attendees"].append("Mallory")
    assert "Mallory" not in phone.state.row("calendar", "events", "ev1")["attendees"]


def test_clock_advances_only_on_steps(phone: SimPhone) -> None:
    start = phone.observe().clock_ms
    assert phone.observe().clock_ms == start
    phone.call_tool("clock.now", {})
    assert phone.observe().clock_ms == start
    assert phone.act(ToolCall(name="clock.now")).clock_ms == start + 1000
    from schemas.actions import Wait
    assert phone.act(Wait(seconds=5)).clock_ms == start + 1000 + 1000 + 5000


def test_step_limit_ends_the_episode() -> None:
    phone = SimPhone()
    phone.reset(make_task(max_steps=2))
    assert not phone.act(ToolCall(name="clock.now")).done
    last = phone.act(ToolCall(name="clock.now"))
    assert last.done and "step limit" in last.message
    after = phone.act(ToolCall(name="clock.now"))
    assert after.result.error.code == "conflict" and after.step == 2


def test_observations_satisfy_the_contract(phone: SimPhone) -> None:
    """Observations are built without re-validation for speed; they must still round-trip."""
    from schemas.observations import Observation
    for action in [*SCRIPT, ToolCall(name="nope"), ToolCall(name="contacts.get", arguments={"id": "x"})]:
        obs = phone.act(action)
        again = Observation.model_validate_json(obs.model_dump_json())
        assert again.model_dump() == obs.model_dump()
