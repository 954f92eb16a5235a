"""The device contract, written once: every Device backend (SimPhone, AdbPhone over the fake adb
server) subclasses DeviceContract, supplies `make_device`, and must pass every test here.

Everything is checked through the Device protocol (observations and tool results), never
through a backend's internals, so the same assertions hold for a simulated and a real phone.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from devices.protocol import Device, DeviceError, TaskInstance
from schemas.actions import (
    AskUser,
    Click,
    Delegate,
    Finish,
    InputText,
    MemoryRead,
    MemoryWrite,
    NavigateHome,
    OpenApp,
    ToolCall,
    UseSkill,
    Wait,
)
from schemas.observations import Observation, UIElement

__all__ = ["CONTRACT_TASK", "DeviceContract", "contact_id", "tool"]

CONTRACT_TASK = TaskInstance(
    task_id="contract-0", template="contract", family="tool", split="dev", index=0, seed=7,
    goal="Exercise the device contract.",
    initial_state={
        "contacts": {"contacts": [{"id": "ct900", "name": "Zoe Contract",
                                   "phone": "+1-555-000-0900", "email": "zoe@example.com",
                                   "company": "Acme", "starred": True}]},
        "settings": {"brightness": 30, "bluetooth": True},
        "memory": {"favourite_colour": "teal"},
        "user": {"answers": {"birthday": "March 3rd"}},
    },
)


def _find(screen: list[UIElement], *, rid_suffix: str | None = None,
          text: str | None = None) -> int:
    for index, element in enumerate(screen):
        if rid_suffix is not None and (element.resource_id or "").endswith(rid_suffix):
            return index
        if text is not None and text in (element.text or "", element.content_description or ""):
            return index
    raise AssertionError(f"no element with id suffix {rid_suffix!r} or text {text!r} on screen: "
                         f"{[e.text or e.content_description for e in screen]}")


def _texts(obs: Observation) -> list[str]:
    return [e.text or e.content_description or "" for e in obs.screen]


def _tool(device: Device, tool_name: str, /, **arguments: Any) -> Any:
    obs = device.act(ToolCall(name=tool_name, arguments=arguments))
    assert obs.result is not None
    return obs.result


def _contact_id(device: Device, name: str) -> str:
    """The id the device gave the contact called `name` (a real phone assigns its own ids)."""
    found = _tool(device, "contacts.search", query=name)
    assert found.ok and len(found.value) == 1, found
    return found.value[0]["id"]


class DeviceContract(abc.ABC):
    """The tests every Device must pass. Subclasses implement `make_device` and say whether the
    backend can fork (a real device cannot: fork raises DeviceError)."""

    supports_fork: ClassVar[bool] = True
    #: Two launcher labels on the home screen, and the app the second one opens.
    home_icons: ClassVar[tuple[str, str]] = ("Contacts", "Notes")
    second_app: ClassVar[str] = "notes"
    #: Whether the backend seeds a default world (the sim's Alice Chen & co.); a phone does not.
    has_world: ClassVar[bool] = True
    #: Whether alarms read back carry label and days (the stock clock's dumpsys does not show them).
    alarm_details: ClassVar[bool] = True

    @abc.abstractmethod
    def make_device(self) -> Iterator[Device]:
        """Yields a fresh device (and cleans it up afterwards)."""

    @pytest.fixture
    def device(self) -> Iterator[Device]:
        yield from self.make_device()

    @pytest.fixture
    def ready(self, device: Device) -> Device:
        device.reset(CONTRACT_TASK)
        return device

    # -- reset and observe ------------------------------------------------------------------

    def test_implements_the_protocol(self, device: Device) -> None:
        assert isinstance(device, Device)
        assert device.device_id

    def test_reset_shows_the_home_screen_with_app_icons(self, device: Device) -> None:
        obs = device.reset(CONTRACT_TASK)
        assert (obs.step, obs.clock_ms, obs.done) == (0, CONTRACT_TASK.start_clock_ms, False)
        assert obs.foreground_app == "home"
        icons = [e for e in obs.screen if e.is_clickable and e.text in self.home_icons]
        assert len(icons) == 2 and all(e.bounds is not None for e in icons)

    def test_observe_does_not_advance_the_clock(self, ready: Device) -> None:
        first, second = ready.observe(), ready.observe()
        assert (first.step, first.clock_ms) == (second.step, second.clock_ms) == (
            0, CONTRACT_TASK.start_clock_ms)
        assert _texts(first) == _texts(second)

    def test_initial_state_is_loaded(self, ready: Device) -> None:
        contact = _tool(ready, "contacts.get", id=_contact_id(ready, "Zoe Contract"))
        assert contact.ok and contact.value["name"] == "Zoe Contract"
        assert contact.value["starred"] is True
        assert _tool(ready, "settings.get", key="brightness").value["value"] == 30
        assert _tool(ready, "settings.get", key="bluetooth").value["value"] is True
        default = _tool(ready, "contacts.search", query="Alice")
        assert default.ok and [c["name"] for c in default.value] == (
            ["Alice Chen"] if self.has_world else [])
        memory = ready.act(MemoryRead(key="favourite_colour")).result
        assert memory is not None and memory.value["value"] == "teal"
        reply = ready.act(AskUser(question="When is my birthday?")).result
        assert reply is not None and reply.value == "March 3rd"

    def test_reset_discards_the_previous_episode(self, ready: Device) -> None:
        _tool(ready, "contacts.delete", id=_contact_id(ready, "Zoe Contract"))
        _tool(ready, "contacts.add", name="Left Over", phone="+1-555-000-0333")
        _tool(ready, "settings.set", key="brightness", value=90)
        ready.act(MemoryWrite(key="scratch", value=1))
        obs = ready.reset(CONTRACT_TASK)
        assert obs.step == 0
        assert _tool(ready, "contacts.get", id=_contact_id(ready, "Zoe Contract")).ok
        assert _tool(ready, "contacts.search", query="Left Over").value == []
        assert _tool(ready, "settings.get", key="brightness").value["value"] == 30
        assert not ready.act(MemoryRead(key="scratch")).result.ok

    # -- GUI --------------------------------------------------------------------------------

    def test_open_app_click_and_type_change_the_screen_and_the_state(self, ready: Device) -> None:
        home = ready.observe()
        obs = ready.act(OpenApp(app_name="Contacts"))
        assert obs.foreground_app == "contacts" and _texts(obs) != _texts(home)
        obs = ready.act(Click(index=_find(obs.screen, rid_suffix=":id/add")))
        assert "New contact" in _texts(obs)
        obs = ready.act(InputText(index=_find(obs.screen, rid_suffix=":id/name"),
                                  text="Quinn O'Hara & Co"))
        assert obs.result is None or obs.result.ok
        obs = ready.act(InputText(index=_find(obs.screen, rid_suffix=":id/phone"),
                                  text="+1-555-000-0777"))
        obs = ready.act(Click(index=_find(obs.screen, rid_suffix=":id/save")))
        found = _tool(ready, "contacts.search", query="Quinn")
        assert found.ok and [(c["name"], c["phone"]) for c in found.value] == [
            ("Quinn O'Hara & Co", "+1-555-000-0777")]

    def test_click_by_point_hits_the_element_there(self, ready: Device) -> None:
        obs = ready.observe()
        icon = obs.screen[_find(obs.screen, text=self.home_icons[1])]
        assert icon.bounds is not None
        x, y = icon.bounds.center
        assert ready.act(Click(x=x, y=y)).foreground_app == self.second_app
        assert ready.act(NavigateHome()).foreground_app == "home"

    def test_a_bad_gui_target_is_a_typed_error(self, ready: Device) -> None:
        obs = ready.act(Click(index=999))
        assert obs.result is not None and not obs.result.ok
        assert obs.result.error.code == "bad_arguments"
        obs = ready.act(OpenApp(app_name="Flappy Bird"))
        assert obs.result.error.code == "bad_arguments" and obs.foreground_app == "home"

    # -- tools ------------------------------------------------------------------------------

    def test_a_tool_call_returns_a_result_and_its_effect_is_visible(self, ready: Device) -> None:
        added = _tool(ready, "contacts.add", name="Yuri Tool", phone="+1-555-000-0123",
                      company="Acme")
        assert added.ok and added.name == "contacts.add"
        found = _tool(ready, "contacts.search", query="Yuri")
        assert [c["company"] for c in found.value] == ["Acme"]
        deleted = _tool(ready, "contacts.delete", id=found.value[0]["id"])
        assert deleted.ok and deleted.value["name"] == "Yuri Tool"
        assert _tool(ready, "contacts.search", query="Yuri").value == []

    def test_settings_tools_change_device_settings(self, ready: Device) -> None:
        changed = _tool(ready, "settings.set", key="wifi", value=False)
        assert changed.ok and changed.value["previous"] is True
        assert _tool(ready, "settings.get", key="wifi").value["value"] is False
        toggled = _tool(ready, "settings.toggle", key="wifi")
        assert toggled.value == {"key": "wifi", "value": True, "previous": False}
        assert _tool(ready, "settings.set", key="volume_ring", value=2).ok
        assert _tool(ready, "settings.get", key="volume_ring").value["value"] == 2

    def test_alarms_set_by_tool_are_listed(self, ready: Device) -> None:
        alarm = _tool(ready, "clock.set_alarm", time="06:45", label="Gym", days=["mon", "fri"])
        assert alarm.ok and alarm.value["time"] == "06:45"
        listed = _tool(ready, "clock.list_alarms")
        assert any(a["time"] == "06:45" and a["enabled"] for a in listed.value)
        if self.alarm_details:
            assert alarm.value["days"] == ["mon", "fri"]
            assert any(a["label"] == "Gym" for a in listed.value)

    def test_bad_tool_arguments_are_a_typed_error_not_an_exception(self, ready: Device) -> None:
        missing = _tool(ready, "contacts.add", name="No Phone")
        assert not missing.ok and missing.error.code == "bad_arguments"
        assert "phone" in missing.error.message
        wrong = _tool(ready, "settings.set", key="brightness", value=500)
        assert wrong.error.code == "bad_arguments"
        assert _tool(ready, "contacts.get", id="ct-none").error.code == "not_found"
        assert _tool(ready, "teleport.now").error.code == "unknown_tool"

    def test_skills_and_delegation_run_their_tool_calls(self, ready: Device) -> None:
        skill = ready.act(UseSkill(skill="bedtime_mode",
                                   arguments={"wake_time": "06:30", "brightness": 10})).result
        assert skill.ok and len(skill.value["steps"]) == 4
        assert _tool(ready, "settings.get", key="dark_mode").value["value"] is True
        assert _tool(ready, "settings.get", key="brightness").value["value"] == 10
        plan = {"tool_calls": [{"name": "settings.set",
                                "arguments": {"key": "location", "value": False}},
                               {"name": "contacts.delete",
                                "arguments": {"id": _contact_id(ready, "Zoe Contract")}}]}
        delegated = ready.act(Delegate(agent="device_admin", instruction="privacy",
                                       arguments=plan)).result
        assert not delegated.ok and delegated.error.code == "permission_denied"
        assert _tool(ready, "settings.get", key="location").value["value"] is False
        assert _tool(ready, "contacts.search", query="Zoe Contract").value

    # -- counters, snapshots, ending --------------------------------------------------------

    def test_step_and_clock_advance_with_every_action(self, ready: Device) -> None:
        start = ready.observe()
        one = ready.act(OpenApp(app_name="notes"))
        two = ready.act(Wait(seconds=5))
        three = ready.act(MemoryWrite(key="k", value="v"))
        assert [one.step, two.step, three.step] == [1, 2, 3]
        assert start.clock_ms < one.clock_ms < two.clock_ms < three.clock_ms
        assert two.clock_ms - one.clock_ms >= 5000

    def test_snapshot_and_restore_return_to_the_old_state(self, ready: Device) -> None:
        before = ready.act(ToolCall(name="contacts.search", arguments={"query": "Zoe"}))
        snap = ready.snapshot()
        _tool(ready, "contacts.delete", id=_contact_id(ready, "Zoe Contract"))
        _tool(ready, "contacts.add", name="After Snapshot", phone="+1-555-000-0444")
        _tool(ready, "settings.set", key="brightness", value=77)
        ready.act(MemoryWrite(key="favourite_colour", value="red"))
        ready.restore(snap)
        assert ready.observe().step == before.step
        assert _tool(ready, "contacts.get", id=_contact_id(ready, "Zoe Contract")).ok
        assert _tool(ready, "contacts.search", query="After Snapshot").value == []
        assert _tool(ready, "settings.get", key="brightness").value["value"] == 30
        assert ready.act(MemoryRead(key="favourite_colour")).result.value["value"] == "teal"

    def test_fork_is_independent_or_refused(self, ready: Device) -> None:
        if not self.supports_fork:
            with pytest.raises(DeviceError, match="cannot be forked"):
                ready.fork()
            return
        twin = ready.fork()
        zoe = _contact_id(ready, "Zoe Contract")
        _tool(twin, "contacts.delete", id=zoe)
        assert _tool(ready, "contacts.get", id=zoe).ok
        assert not _tool(twin, "contacts.get", id=zoe).ok

    def test_finish_ends_the_episode(self, ready: Device) -> None:
        obs = ready.act(Finish(answer="all done"))
        assert obs.done and obs.result.value == "all done"
        after = ready.act(OpenApp(app_name="notes"))
        assert after.done and after.result.error.code == "conflict"
        assert after.step == obs.step


#: Public names for backend-specific contract subclasses.
tool = _tool
contact_id = _contact_id
