"""At most once, and resets that are checked: a write whose connection drops is read back before
it is ever sent again, and a reset that does not take ends as a device failure, never as a task
started on a dirty phone. Through the real adb server and a stock-answering fake phone."""

from __future__ import annotations

import pytest

from devices.adb.phone import AdbPhone
from devices.protocol import DeviceError
from schemas.actions import ToolCall
from tests.devices.contract import CONTRACT_TASK
from tests.devices.fake_adbd import FakeAdbd, StockAndroid

RAW_INSERT = "content insert --uri content://com.android.contacts/raw_contacts"


def _call(phone: AdbPhone, tool_name: str, /, **arguments: object):
    result = phone.act(ToolCall(name=tool_name, arguments=arguments)).result
    assert result is not None
    return result


def _live(android: StockAndroid) -> list[str | None]:
    return sorted(str(c["display_name"]) for c in android.raw_contacts.values() if not c["deleted"])


def _sent(adbd: FakeAdbd, prefix: str) -> int:
    return sum(s.partition(":")[2].startswith(prefix) for s in adbd.services if s.startswith("shell"))


@pytest.mark.parametrize(("drop", "sends", "read_back"), [
    # It ran, then the link dropped: the read-back finds the contact, so it is not sent again.
    ("drop_after_running", 1, 1),
    # The link dropped before it ran: the read-back finds nothing, so it is sent again, once.
    ("drop_before_running", 2, 0),
], ids=["ran-before-the-drop", "dropped-before-it-ran"])
def test_a_contact_insert_whose_link_dropped_ends_as_one_contact(
        phone: AdbPhone, adbd: FakeAdbd, android: StockAndroid, drop: str, sends: int,
        read_back: int) -> None:
    phone.reset(CONTRACT_TASK)
    before = _sent(adbd, RAW_INSERT)
    getattr(adbd, drop)(1, matching="content insert")
    added = _call(phone, "contacts.add", name="Ines Ruiz", phone="+1-555-777-0000")
    assert added.ok and added.value["name"] == "Ines Ruiz"
    assert _live(android) == ["Ines Ruiz", "Mum", "Zoe Contract"]  # one contact, not two
    assert _sent(adbd, RAW_INSERT) - before == sends and phone.adb.read_back == read_back


def test_a_dropped_data_row_insert_is_read_back_too(phone: AdbPhone, adbd: FakeAdbd,
                                                   android: StockAndroid) -> None:
    phone.reset(CONTRACT_TASK)
    data = "content insert --uri content://com.android.contacts/data"
    adbd.drop_after_running(1, matching=data)
    before = _sent(adbd, data)
    assert _call(phone, "contacts.add", name="Ines Ruiz", phone="+1-555-777-0000").ok
    rows = [d for d in android.data.values() if d["data1"] == "Ines Ruiz"]
    assert len(rows) == 1 and _sent(adbd, data) - before == 1


def test_an_alarm_intent_that_ran_is_one_alarm(phone: AdbPhone, adbd: FakeAdbd,
                                               android: StockAndroid) -> None:
    phone.reset(CONTRACT_TASK)
    adbd.drop_after_running(1, matching="am start -a android.intent.action.SET_ALARM")
    result = _call(phone, "clock.set_alarm", time="06:40", label="Swim")
    assert result.ok and result.value["time"] == "06:40"
    assert [(a.hour, a.minute) for a in android.alarms.values()] == [(6, 40)]


def test_a_dropped_move_is_read_back(phone: AdbPhone, adbd: FakeAdbd, android: StockAndroid) -> None:
    task = CONTRACT_TASK.model_copy(update={"initial_state": {"files": {"files": [
        {"name": "beach.jpg", "album": "Holidays", "size_kb": 2}]}}})
    phone.reset(task)
    adbd.drop_after_running(1, matching="mkdir -p")
    moved = _call(phone, "files.move", id="Holidays/beach.jpg", album="Trips")
    assert moved.ok and moved.value["id"] == "Trips/beach.jpg"


def test_reset_removes_every_file_the_episode_left_at_any_depth(
        phone: AdbPhone, android: StockAndroid) -> None:
    task = CONTRACT_TASK.model_copy(update={"initial_state": {"files": {"files": [
        {"name": "beach.jpg", "album": "Holidays", "size_kb": 2}]}}})
    phone.reset(task)
    android.files["/sdcard/Flywheel/loose.txt"] = b"x"  # outside any album
    android.files["/sdcard/Flywheel/Holidays/deeper/x.jpg"] = b"x"  # a folder inside an album
    android.files["/sdcard/Flywheel/Trips/new.jpg"] = b"x"
    android.files["/sdcard/DCIM/own.jpg"] = b"mine"  # the owner's, outside Flywheel's folder
    phone.reset(task)
    assert sorted(n for n in android.files if n.startswith("/sdcard/Flywheel/")) == [
        "/sdcard/Flywheel/Holidays/beach.jpg"]
    assert android.files["/sdcard/DCIM/own.jpg"] == b"mine"


def test_a_listing_line_it_cannot_read_fails_the_read_with_the_line(
        phone: AdbPhone, android: StockAndroid) -> None:
    phone.reset(CONTRACT_TASK)
    android.files["/sdcard/Flywheel/Holidays/a.jpg"] = b"x"
    original = android._cmd_find
    android._cmd_find = lambda args: (original(args)[0] + b"stat: '/sdcard/Flywheel/b': Permission denied\n",  # type: ignore[method-assign]
                                      b"", 0)
    listed = _call(phone, "files.list")
    assert not listed.ok and "Permission denied" in listed.error.message


def test_a_reset_that_does_not_take_is_a_device_failure(phone: AdbPhone, android: StockAndroid) -> None:
    phone.reset(CONTRACT_TASK)
    assert _call(phone, "contacts.add", name="Stranger", phone="+1-555-999-0000").ok
    android.undeletable.add("Stranger")  # the provider now leaves this contact on delete
    with pytest.raises(DeviceError, match="did not take.*contacts: 1 unexpected"):
        phone.reset(CONTRACT_TASK)
    android.undeletable.clear()
    phone.reset(CONTRACT_TASK)  # the next reset cleans up
    assert _live(android) == ["Mum", "Zoe Contract"]


def test_toybox_folders_behave_as_on_the_phone(android: StockAndroid) -> None:
    assert android.run("mkdir /sdcard/Flywheel/A/B")[2] == 1  # no parent, no -p
    assert android.run("mkdir -p /sdcard/Flywheel/A/B")[2] == 0
    assert android.run("mkdir /sdcard/Flywheel/A")[1].startswith(b"mkdir: '/sdcard/Flywheel/A': File exists")
    out, _err, code = android.run("find /sdcard/Flywheel -type f -exec stat -c '%s %n' {} +")
    assert (out, code) == (b"", 0)  # an empty folder lists nothing, successfully
    assert android.run("find /sdcard/Nope -type f -exec stat -c '%s %n' {} +")[2] == 1
    assert android.run("mv /sdcard/x /sdcard/y")[2] == 1
    assert android.run("rm /sdcard/Flywheel/A")[1].endswith(b"Is a directory\n")
    assert android.run("rm -rf /sdcard/Flywheel/A")[2] == 0


def test_a_delete_the_provider_ignores_is_a_failure_not_success(phone: AdbPhone,
                                                                android: StockAndroid) -> None:
    phone.reset(CONTRACT_TASK)
    mum = next(c["id"] for c in _call(phone, "contacts.search", query="Mum").value)
    android.undeletable.add("Mum")  # a read-only account's contact: exit 0, nothing removed
    refused = _call(phone, "contacts.delete", id=mum)
    assert not refused.ok and "still lists it" in refused.error.message
    android.undeletable.clear()
    assert _call(phone, "contacts.delete", id=mum).ok
