"""The device runner's shell on a stock phone through the real adb server: a reset the phone
cannot do is `device.failed` (reset_failed) — never an observation — and the runner goes on."""

from __future__ import annotations

from devices.adb.phone import AdbPhone
from schemas.actions import ToolCall
from schemas.episodes import DeviceFailed, ObservationRecorded
from services.device_runner.decide import RunnerMemory
from services.device_runner.execute import handle
from tests.devices.contract import CONTRACT_TASK
from tests.devices.fake_adbd import FakeAdbd
from tests.services.device_runner.helpers import request

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
