"""What the stock profile sends to a phone as it ships, and what it reads back: providers,
`cmd`, intents + `dumpsys alarm`, `wm size`, the root package, and a reset that restores the
phone's own data instead of clearing apps."""

from __future__ import annotations

from pathlib import Path

import pytest

from devices.adb.phone import AdbPhone, escape_input_text
from devices.adb.stock import parse_alarm_dump, parse_rows
from devices.harness.harness import Harness
from devices.protocol import DeviceError, TaskInstance
from schemas.actions import Answer, InputText, NavigateHome, OpenApp, Scroll, ToolCall
from tests.devices.adb_stock.conftest import stock_settings
from tests.devices.contract import CONTRACT_TASK
from tests.devices.fake_adbd import FakeAdbd, RealAdbServer, StockAndroid


def _call(phone: AdbPhone, tool_name: str, /, **arguments: object):
    result = phone.act(ToolCall(name=tool_name, arguments=arguments)).result
    assert result is not None
    return result


def test_reset_keeps_the_owners_data_and_undoes_the_episode(
        phone: AdbPhone, android: StockAndroid) -> None:
    phone.reset(CONTRACT_TASK)
    names = sorted(c["display_name"] for c in android.raw_contacts.values() if not c["deleted"])
    assert names == ["Mum", "Zoe Contract"]
    assert not any(line.startswith("pm clear") for line in android.history)
    mum = next(c["id"] for c in _call(phone, "contacts.search", query="Mum").value)
    _call(phone, "contacts.delete", id=mum)
    _call(phone, "contacts.add", name="Stranger", phone="+1-555-999-0000")
    _call(phone, "clock.set_alarm", time="05:15")
    _call(phone, "settings.set", key="wifi", value=False)
    phone.reset(CONTRACT_TASK)
    state = phone.device_state()
    contacts = sorted((c["name"], c["phone"], c["starred"])
                      for c in state["tables"]["contacts"]["contacts"].values())
    assert contacts == [("Mum", "+1-555-010-0001", True),
                        ("Zoe Contract", "+1-555-000-0900", True)]
    assert state["tables"]["clock"]["alarms"] == {}
    assert state["settings"]["wifi"] is True and state["settings"]["brightness"] == 30


def test_the_baseline_lives_on_the_phone(phone: AdbPhone, adb_server: RealAdbServer,
                                         adbd: FakeAdbd, android: StockAndroid,
                                         tmp_path: Path) -> None:
    phone.reset(CONTRACT_TASK)
    assert "/data/local/tmp/flywheel-ledger.json" in android.files
    _call(phone, "contacts.add", name="Stranger", phone="+1-555-999-0000")
    again = AdbPhone(adbd.serial, settings=stock_settings(adb_server, adbd.serial, tmp_path))
    again.reset(CONTRACT_TASK)  # a restarted runner restores the same baseline
    assert _call(again, "contacts.search", query="Stranger").value == []
    assert len(_call(again, "contacts.search", query="Mum").value) == 1


def test_tools_use_stock_commands(phone: AdbPhone, android: StockAndroid) -> None:
    phone.reset(CONTRACT_TASK)
    mark = len(android.history)
    _call(phone, "settings.set", key="wifi", value=False)
    _call(phone, "settings.set", key="dark_mode", value=True)
    _call(phone, "clock.set_alarm", time="07:05", label="Run")
    sent = android.history[mark:]
    assert "cmd wifi set-wifi-enabled disabled" in sent
    assert "cmd uimode night yes" in sent
    assert any(c.startswith("am start -a android.intent.action.SET_ALARM") for c in sent)
    assert "dumpsys alarm" in sent
    assert not any("com.flywheel" in c for c in android.history)
    assert android.settings["global"]["wifi_on"] == "0"


def test_what_a_stock_phone_cannot_do_is_refused_not_faked(phone: AdbPhone,
                                                           android: StockAndroid) -> None:
    phone.reset(CONTRACT_TASK)
    mark = len(android.history)
    result = _call(phone, "messages.send", contact="Mum", body="hi")
    assert result.error.code == "unsupported" and "READ_SMS" in result.error.message
    dump = "/data/local/tmp/flywheel-window_dump.xml"
    assert android.history[mark:] == [f"rm -f {dump}; uiautomator dump {dump}",
                                      "screencap -p"]  # only the observation: nothing sent for the refused tool
    assert "messages.send" not in phone.tools and "contacts.add" in phone.tools


def test_a_task_needing_unsupported_apps_fails_its_reset(phone: AdbPhone) -> None:
    task = CONTRACT_TASK.model_copy(update={"initial_state": {"notes": {"notes": [{"title": "x"}]}}})
    with pytest.raises(DeviceError, match="stock profile cannot load"):
        phone.reset(task)


def test_exit_codes_and_refusals_have_their_own_error_codes(phone: AdbPhone,
                                                            android: StockAndroid) -> None:
    phone.reset(CONTRACT_TASK)
    android.settings["global"].pop("wifi_on")
    del android.settings["secure"]  # `settings get secure …` now fails with exit 1
    failed = _call(phone, "settings.get", key="dark_mode")
    assert failed.error.code == "command_failed" and "exit 1" in failed.error.message
    with_code = phone.act(OpenApp(app_name="com.example.missing"))
    assert with_code.result.error.code == "bad_arguments"


def test_screen_size_comes_from_wm_size(phone: AdbPhone, android: StockAndroid) -> None:
    android.width, android.height = 720, 1600
    phone.reset(CONTRACT_TASK)
    assert phone.screen_size() == (720, 1600)
    mark = len(android.history)
    phone.act(Scroll(direction="down"))
    swipe = next(c for c in android.history[mark:] if c.startswith("input swipe"))
    x1, y1, x2, y2 = (int(v) for v in swipe.split()[2:6])
    assert x1 == x2 == 360 and y1 == 1200 and y2 == 400


def test_foreground_app_is_the_dump_root_package(phone: AdbPhone) -> None:
    assert phone.reset(CONTRACT_TASK).foreground_app == "home"
    assert phone.act(OpenApp(app_name="clock")).foreground_app == "clock"
    assert phone.act(OpenApp(app_name="com.android.chrome")).foreground_app == "chrome"
    assert phone.act(NavigateHome()).foreground_app == "home"


def test_open_app_resolves_the_launcher_component(phone: AdbPhone, android: StockAndroid) -> None:
    phone.reset(CONTRACT_TASK)
    mark = len(android.history)
    phone.act(OpenApp(app_name="Settings"))
    sent = android.history[mark:]
    assert "pm list packages" in sent
    assert ("cmd package resolve-activity --brief -c android.intent.category.LAUNCHER "
            "com.android.settings") in sent
    assert "am start -n com.android.settings/.Settings" in sent


def test_clearing_text_on_old_android_avoids_keycombination(
        adb_server: RealAdbServer, tmp_path: Path) -> None:
    from tests.devices.fake_adbd import stock_device

    old = StockAndroid(sdk=30)
    with stock_device(old) as daemon:
        adb_server.connect(daemon.serial)
        phone = AdbPhone(daemon.serial, settings=stock_settings(adb_server, daemon.serial,
                                                                tmp_path))
        obs = phone.reset(CONTRACT_TASK)
        icon = next(i for i, e in enumerate(obs.screen) if e.text == "Clock")
        phone.act(InputText(index=icon, text="ab", clear=True))
        sent = old.history
        assert not any("keycombination" in c for c in sent)
        assert "input keyevent 123 67 67 67 67 67" in sent  # "Clock": end + 5 deletes
        result = phone.act(InputText(text="x", clear=True)).result
        assert result.error.code == "bad_arguments" and "API < 33" in result.error.message
    adb_server.adb("disconnect", daemon.serial)


def test_text_that_input_cannot_type_is_refused() -> None:
    assert escape_input_text("O'Hara & Co; $HOME") == "O'Hara%s&%sCo;%s$HOME"
    with pytest.raises(ValueError, match="ASCII"):
        escape_input_text("naïve")
    with pytest.raises(ValueError, match="'%s'"):
        escape_input_text("100%sure")


def test_content_rows_keep_commas_and_equals_in_values() -> None:
    out = "Row: 0 _id=3, display_name=Smith, Jane = CEO, starred=1\nRow: 1 _id=4, " \
          "display_name=NULL, starred=0\n"
    rows = parse_rows(out, ["_id", "display_name", "starred"])
    assert rows == [{"_id": "3", "display_name": "Smith, Jane = CEO", "starred": "1"},
                    {"_id": "4", "display_name": None, "starred": "0"}]
    assert parse_rows("No result found.\n", ["_id"]) == []
    with pytest.raises(DeviceError):
        parse_rows("Row: 0 _id=3\n", ["_id", "starred"])


def test_alarm_dump_yields_only_the_clock_apps_alarms_and_timers() -> None:
    android = StockAndroid()
    android.run("am start -a android.intent.action.SET_ALARM --ei android.intent.extra.alarm.HOUR"
                " 6 --ei android.intent.extra.alarm.MINUTES 30 --ez "
                "android.intent.extra.alarm.SKIP_UI true")
    android.run("am start -a android.intent.action.SET_TIMER --ei "
                "android.intent.extra.alarm.LENGTH 300 --ez android.intent.extra.alarm.SKIP_UI true")
    alarms, timers = parse_alarm_dump(android.run("dumpsys alarm")[0].decode())
    assert [a["time"] for a in alarms.values()] == ["06:30"]
    assert [t["seconds_left"] for t in timers.values()] == [300]
    other = "  RTC_WAKEUP #0: Alarm{1 type 0 origWhen 1 window 0 com.example.app}\n" \
            "    alarmClock=AlarmClockInfo{triggerTime=1, showIntent=null}\n"
    assert parse_alarm_dump(other) == ({}, {})



def test_both_alarm_clock_dump_forms_are_read() -> None:
    """AOSP 14 prints an `Alarm clock:` block with a local triggerTime; Android 11 printed
    `alarmClock=AlarmClockInfo{triggerTime=<ms>}` with the local time in origWhen."""
    clock = "com.google.android.deskclock"
    aosp14 = (f"  RTC_WAKEUP #0: Alarm{{a1 type 0 origWhen 1714544100000 window 0 {clock}}}\n"
              "    tag=*walarm*:com.android.deskclock.ALARM_ALERT\n"
              "    type=RTC_WAKEUP origWhen=2024-05-01 06:15:00.000 window=0 flags=0x9\n"
              "    Alarm clock:\n"
              "      triggerTime=2024-05-01 06:15:00.000\n"
              "      showIntent=PendingIntent{d1e3: PendingIntentRecord{9a0 x startActivity}}\n")
    android11 = (f"  RTC_WAKEUP #0: Alarm{{a1 type 0 origWhen 1714544100000 window 0 {clock}}}\n"
                 "    type=RTC_WAKEUP origWhen=2024-05-01 07:45:00.000 window=0 flags=0x9\n"
                 "    alarmClock=AlarmClockInfo{triggerTime=1714549500000, showIntent=null}\n")
    assert [a["time"] for a in parse_alarm_dump(aosp14)[0].values()] == ["06:15"]
    assert [a["time"] for a in parse_alarm_dump(android11)[0].values()] == ["07:45"]
    no_clock = aosp14.replace("    Alarm clock:\n      triggerTime=2024-05-01 06:15:00.000\n", "")
    assert parse_alarm_dump(no_clock)[0] == {}  # an alarm without alarm-clock info is no alarm


def test_final_state_has_the_contract_shape(phone: AdbPhone) -> None:
    """Through the harness: the phone's tables and settings read over adb, memory, log and
    answer from the harness (CONTRACT-6 §3)."""
    harness = Harness(phone)
    harness.reset(TaskInstance(task_id="t-0", template="t", family="tool", split="dev", index=0,
                               seed=1, goal="g", initial_state={"memory": {"k": "v"}}))
    assert harness.act(ToolCall(name="settings.toggle", arguments={"key": "bluetooth"})).result.ok
    harness.act(Answer(text="Bluetooth is on."))
    state = harness.final_state()
    assert set(state) == {"tables", "settings", "memory", "log", "answer", "goal_status",
                          "clock_ms"}
    assert state["settings"]["bluetooth"] is True and state["memory"] == {"k": "v"}
    assert state["log"][0]["name"] == "settings.toggle" and state["answer"] == "Bluetooth is on."
    assert state["clock_ms"] == phone.device_state()["clock_ms"] > 0
    assert set(state["tables"]) == {"contacts", "clock", "files"}


def test_a_bare_phone_refuses_planner_actions(phone: AdbPhone) -> None:
    phone.reset(CONTRACT_TASK)
    refused = phone.act(Answer(text="done")).result
    assert refused is not None and refused.error.code == "unsupported"
    assert "Harness" in refused.error.message and phone.observe().step == 0  # nothing ran


FILES_TASK = CONTRACT_TASK.model_copy(update={"initial_state": {"files": {"files": [
    {"name": "beach.jpg", "album": "Holidays", "size_kb": 3},
    {"name": "lease.pdf", "album": "Documents", "size_kb": 1}]}}})


def test_files_live_in_flywheels_folder_and_the_owners_stay_untouched(
        phone: AdbPhone, android: StockAndroid) -> None:
    android.files["/sdcard/DCIM/Camera/own.jpg"] = b"mine"
    phone.reset(FILES_TASK)
    listed = _call(phone, "files.list").value
    assert [(f["id"], f["kind"], f["size_kb"]) for f in listed] == [
        ("Documents/lease.pdf", "document", 1), ("Holidays/beach.jpg", "photo", 3)]
    moved = _call(phone, "files.move", id="Holidays/beach.jpg", album="Camera roll").value
    assert moved["id"] == "Camera roll/beach.jpg" and moved["album"] == "Camera roll"
    assert "/sdcard/Flywheel/Camera roll/beach.jpg" in android.files
    assert _call(phone, "files.delete", id="Documents/lease.pdf").ok
    escape = _call(phone, "files.move", id="Camera roll/beach.jpg", album="../DCIM")
    assert escape.error.code == "bad_arguments"
    assert _call(phone, "files.tag", id="Camera roll/beach.jpg", tag="x").error.code == \
        "unsupported"
    phone.reset(FILES_TASK)
    assert sorted(f["id"] for f in _call(phone, "files.list").value) == [
        "Documents/lease.pdf", "Holidays/beach.jpg"]
    assert android.files["/sdcard/DCIM/Camera/own.jpg"] == b"mine"
    assert not any("/sdcard/DCIM" in c for c in android.history)


def test_a_setting_the_phone_takes_without_effect_is_a_failure_not_success(phone: AdbPhone,
                                                                           android: StockAndroid) -> None:
    phone.reset(CONTRACT_TASK)
    android.charging = True
    refused = _call(phone, "settings.set", key="battery_saver", value=True)
    assert not refused.ok and "still reports False" in refused.error.message
    android.charging = False
    taken = _call(phone, "settings.set", key="battery_saver", value=True)
    assert taken.ok and taken.value["value"] is True


def test_reset_sends_every_app_back_to_its_launch_screen(phone: AdbPhone, android: StockAndroid) -> None:
    """A stock app resumes where it was left after HOME (Settings on Display); reset force-stops it."""
    from schemas.actions import Click

    obs = phone.reset(CONTRACT_TASK)
    obs = phone.act(OpenApp(app_name="Settings"))
    phone.act(Click(index=next(i for i, e in enumerate(obs.screen) if e.text == "Display")))
    android.run("input keyevent 3")  # HOME alone: Settings would resume on Display
    assert android.run("monkey -p com.android.settings 1")[2] == 0 and android.screen == "display"
    phone.reset(CONTRACT_TASK)
    screen = [e.text for e in phone.act(OpenApp(app_name="Settings")).screen]
    assert "Network & internet" in screen and "Dark theme" not in screen


def test_a_screen_nothing_was_sent_to_since_is_not_dumped_again(phone: AdbPhone,
                                                                 android: StockAndroid) -> None:
    phone.reset(CONTRACT_TASK)
    dumps = lambda: sum("uiautomator dump" in line for line in android.history)
    before = dumps()
    first, again = phone.observe(), phone.observe()
    assert dumps() == before and phone.dumps_reused == 2  # reset's own dump still shows it
    assert again.screen == first.screen
    phone.act(OpenApp(app_name="Clock"))  # input was sent: the next look is a new dump
    assert dumps() == before + 1 and phone.observe().foreground_app == "clock"
    _call(phone, "settings.get", key="wifi")  # a tool call may change what is shown, too
    assert dumps() == before + 2
