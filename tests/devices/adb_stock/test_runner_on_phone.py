"""The device runner's shell on a stock phone through the real adb server: a reset the phone
cannot do is `device.failed` (reset_failed) — never an observation — and the runner goes on."""

from __future__ import annotations

import uuid

import pytest

from devices.adb.phone import AdbPhone
from schemas.actions import ToolCall
from schemas.episodes import DeviceFailed, ObservationRecorded
from services.device_runner.decide import RunnerMemory
from services.device_runner.execute import handle
from services.device_runner.settings import DeviceRunnerSettings
from tests.devices.contract import CONTRACT_TASK
from tests.devices.fake_adbd import FakeAdbd
from tests.services.device_runner.helpers import request
from tests.services.device_runner.test_loop import _publish, _serve_and_collect

SEARCH = ToolCall(name="contacts.search", arguments={"query": "Zoe"})


def test_failed_reset_then_a_good_episode_then_a_lost_phone(phone: AdbPhone, adbd: FakeAdbd) -> None:
    memory = RunnerMemory()
    notes = CONTRACT_TASK.model_copy(update={
        "task_id": "notes-dev-00000-00000001",
        "initial_state": {"notes": {"notes": [{"title": "x", "body": "y"}]}}})
    [failed] = handle(phone, request(phone.device_id, "ep-1", 0, SEARCH, task=notes), memory)
    assert isinstance(failed, DeviceFailed) and failed.reason == "reset_failed"
    assert "stock profile cannot load" in failed.message and failed.step == 0
    [refused] = handle(phone, request(phone.device_id, "ep-1", 1, SEARCH), memory)
    assert isinstance(refused, DeviceFailed) and refused.reason == "unavailable"
    [ok] = handle(phone, request(phone.device_id, "ep-2", 0, SEARCH, task=CONTRACT_TASK), memory)
    assert isinstance(ok, ObservationRecorded)
    assert [c["name"] for c in ok.observation.result.value] == ["Zoe Contract"]
    adbd.kill()
    [lost] = handle(phone, request(phone.device_id, "ep-2", 1, SEARCH), memory)
    assert isinstance(lost, DeviceFailed) and lost.reason == "disconnected"
    assert (memory.executed, memory.failed) == (1, 3)


@pytest.mark.integration
def test_the_runner_publishes_a_failed_reset_as_device_failed_and_keeps_serving(
        bootstrap: str, fresh_topic, phone: AdbPhone) -> None:
    actions, observations = fresh_topic("flywheel.actions"), fresh_topic("flywheel.observations")
    notes = CONTRACT_TASK.model_copy(update={
        "task_id": "notes-dev-00000-00000002",
        "initial_state": {"notes": {"notes": [{"title": "x", "body": "y"}]}}})
    device = phone.device_id
    _publish(bootstrap, actions, [request(device, "ep-a", 0, SEARCH, task=notes),
                                  request(device, "ep-b", 0, SEARCH, task=CONTRACT_TASK),
                                  request(device, "ep-b", 1, SEARCH)])
    settings = DeviceRunnerSettings(device_id=device, group_id=f"phones-{uuid.uuid4().hex[:8]}",
                                    poll_timeout_ms=100, kind="adb")
    memory = RunnerMemory()
    events = _serve_and_collect(bootstrap, actions, observations, [(settings, phone, memory)], 3)
    by_episode = {(e.episode_id, e.step): e for e in events}
    failed = by_episode[("ep-a", 0)]
    assert isinstance(failed, DeviceFailed) and failed.reason == "reset_failed"
    assert isinstance(by_episode[("ep-b", 0)], ObservationRecorded)
    assert isinstance(by_episode[("ep-b", 1)], ObservationRecorded)
    assert (memory.executed, memory.failed) == (2, 1)
