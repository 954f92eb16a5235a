"""AdbPhone behaviour a real device adds: the exact adb commands, UI dump modes, screenshots in
the blob store, retries, and a device that disappears mid-episode."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from devices.adb.phone import AdbPhone, escape_input_text
from devices.blobs import BlobStore
from devices.protocol import DeviceError, DeviceLost
from devices.sim.phone import SimPhone
from schemas.actions import Click, InputText, NavigateBack, NavigateHome, OpenApp, Scroll, ToolCall
from tests.devices.adb.conftest import SERIAL, make_settings
from tests.devices.contract import CONTRACT_TASK
from tests.devices.fake_adb import FakeAdbServer, FakeDevice


@pytest.fixture
def server() -> Iterator[FakeAdbServer]:
    with FakeAdbServer({SERIAL: FakeDevice(SimPhone("sim-behind-adb"))}) as fake:
        yield fake


@pytest.fixture
def phone(server: FakeAdbServer, tmp_path: Path) -> AdbPhone:
    device = AdbPhone(SERIAL, settings=make_settings(server, tmp_path / "blobs"))
    device.reset(CONTRACT_TASK)
    return device


def _since(server: FakeAdbServer, mark: int) -> list[str]:
    return server.shell_commands(SERIAL)[mark:]


def test_gui_actions_become_input_commands(phone: AdbPhone, server: FakeAdbServer) -> None:
    obs = phone.act(OpenApp(app_name="Contacts"))
    assert "monkey -p com.flywheel.contacts -c android.intent.category.LAUNCHER 1" in \
        server.shell_commands(SERIAL)
    add = next(i for i, e in enumerate(obs.screen) if (e.resource_id or "").endswith(":id/add"))
    x, y = obs.screen[add].bounds.center
    mark = len(server.shell_commands(SERIAL))
    obs = phone.act(Click(index=add))
    assert _since(server, mark)[0] == f"input tap {x} {y}"
    name = next(i for i, e in enumerate(obs.screen) if (e.resource_id or "").endswith(":id/name"))
    mark = len(server.shell_commands(SERIAL))
    phone.act(InputText(index=name, text="A 'b' & c"))
    sent = _since(server, mark)
    assert sent[1:3] == ["input keycombination 113 29", "input keyevent 67"]
    assert sent[3] == "input text 'A%s'\"'\"'b'\"'\"'%s&%sc'"
    mark = len(server.shell_commands(SERIAL))
    phone.act(NavigateBack())
    phone.act(Scroll(direction="down"))
    back, swipe = [c for c in _since(server, mark) if c.startswith("input")]
    assert back == "input keyevent 4"
    x1, y1, x2, y2 = (int(v) for v in swipe.split()[2:6])
    assert x1 == x2 and y1 > y2  # scrolling down drags the finger up


def test_input_text_escaping_and_non_ascii() -> None:
    assert escape_input_text("hi there") == "hi%sthere"
    with pytest.raises(ValueError, match="ASCII"):
        escape_input_text("café")


def test_non_ascii_text_is_a_typed_error(phone: AdbPhone) -> None:
    obs = phone.act(InputText(text="naïve"))
    assert not obs.result.ok and obs.result.error.code == "bad_arguments"


def test_tools_use_native_android_commands(phone: AdbPhone, server: FakeAdbServer) -> None:
    mark = len(server.shell_commands(SERIAL))
    phone.act(ToolCall(name="settings.set", arguments={"key": "wifi", "value": False}))
    phone.act(ToolCall(name="settings.set", arguments={"key": "brightness", "value": 40}))
    phone.act(ToolCall(name="clock.set_alarm", arguments={"time": "07:05", "label": "Run"}))
    phone.act(ToolCall(name="contacts.search", arguments={"query": "Zoe"}))
    sent = _since(server, mark)
    assert "svc wifi disable" in sent
    assert "settings put system screen_brightness 102" in sent
    assert any(c.startswith("am start -a android.intent.action.SET_ALARM") and
               "android.intent.extra.alarm.HOUR 7" in c and "MINUTES 5" in c for c in sent)
    assert any(c.startswith("content call --uri content://com.flywheel.contacts.provider "
                            "--method search") for c in sent)
    assert server.devices[SERIAL].phone.state.setting("wifi") is False


def test_content_query_rows_become_the_tool_value(phone: AdbPhone) -> None:
    result = phone.act(ToolCall(name="contacts.get", arguments={"id": "ct900"})).result
    assert result.value == {"id": "ct900", "name": "Zoe Contract", "phone": "+1-555-000-0900",
                            "email": "zoe@example.com", "company": "Acme", "starred": True}


def test_reset_wipes_app_data_and_loads_rows_through_the_provider(
        phone: AdbPhone, server: FakeAdbServer) -> None:
    mark = len(server.shell_commands(SERIAL))
    phone.reset(CONTRACT_TASK)
    sent = [part for line in _since(server, mark) for part in line.split(" && ")]
    assert "pm clear com.flywheel.contacts" in sent
    insert = next(c for c in sent if c.startswith("content insert"))
    assert "--bind id:s:ct900" in insert and "--bind starred:b:true" in insert
    assert "settings put system screen_brightness 76" in sent  # 30 % of 255


def test_pull_mode_reads_the_dump_over_sync(phone: AdbPhone, server: FakeAdbServer) -> None:
    mark = len(server.requests)
    phone.act(NavigateHome())  # input sent, so the observation after it is a new dump
    dump = "/data/local/tmp/flywheel-window_dump.xml"
    assert f"shell,v2:rm -f {dump}; uiautomator dump {dump}" in server.requests[mark:]
    assert "sync:" in server.requests[mark:]


def test_tty_mode_strips_the_dump_trailer(server: FakeAdbServer, tmp_path: Path) -> None:
    phone = AdbPhone(SERIAL, settings=make_settings(server, tmp_path, dump_mode="tty"))
    obs = phone.reset(CONTRACT_TASK)
    raw = server.devices[SERIAL].run("uiautomator dump /dev/tty")[0].decode()
    assert raw.rstrip().endswith("UI hierchary dumped to: /dev/tty")
    assert obs.foreground_app == "home" and any(e.text == "Contacts" for e in obs.screen)
    assert all("hierchary" not in (e.text or "") for e in obs.screen)


def test_screenshot_is_stored_under_its_sha256(phone: AdbPhone, server: FakeAdbServer,
                                               tmp_path: Path) -> None:
    obs = phone.observe()
    shot = obs.screenshot
    assert shot is not None and shot.media_type == "image/png"
    data = BlobStore(tmp_path / "blobs").get(shot.sha256)
    assert hashlib.sha256(data).hexdigest() == shot.sha256 and len(data) == shot.size
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    moved = phone.act(OpenApp(app_name="notes")).screenshot
    assert moved is not None and moved.sha256 != shot.sha256


def test_a_slow_dump_is_retried(server: FakeAdbServer, tmp_path: Path) -> None:
    phone = AdbPhone(SERIAL, settings=make_settings(server, tmp_path, call_timeout_s=0.5))
    phone.reset(CONTRACT_TASK)
    server.stall(SERIAL, seconds=1.0, count=1)
    obs = phone.observe()
    assert any(e.text == "Contacts" for e in obs.screen)
    assert phone.adb.retried == 1


def test_device_that_disappears_mid_episode_raises_device_lost(
        phone: AdbPhone, server: FakeAdbServer) -> None:
    phone.act(OpenApp(app_name="notes"))
    server.disappear(SERIAL)
    with pytest.raises(DeviceLost, match=SERIAL):
        phone.act(ToolCall(name="notes.search", arguments={"query": "x"}))
    with pytest.raises(DeviceLost):
        phone.observe()


def test_fork_is_refused_with_a_clear_sentence(phone: AdbPhone) -> None:
    assert AdbPhone.supports_fork is False
    with pytest.raises(DeviceError, match="cannot be forked"):
        phone.fork()


def test_closed_phone_refuses_work(phone: AdbPhone) -> None:
    phone.close()
    with pytest.raises(DeviceError, match="closed"):
        phone.observe()
