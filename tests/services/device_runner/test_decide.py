"""The runner shell (handle = decide + execute + evolve): one action on one SimPhone → the events
the runner publishes."""

from __future__ import annotations

import threading

import pytest

from devices.sim import SimPhone
from schemas.actions import OpenApp
from schemas.episodes import DeviceFailed, ObservationRecorded
from services.device_runner.decide import RunnerMemory
from services.device_runner.execute import handle
from services.device_runner.guard import ActionGuard
from tests.services.device_runner.helpers import (
    TASK,
    CrashingPhone,
    HangingPhone,
    LosingPhone,
    RefusingPhone,
    request,
    step_of,
)


@pytest.fixture
def phone() -> SimPhone:
    return SimPhone("sim-0")


def test_step_zero_resets_to_the_task_and_executes_the_action(phone: SimPhone) -> None:
    phone.reset(TASK.model_copy(update={"initial_state": {}}))
    phone.act(OpenApp(app_name="contacts"))  # leftovers of an earlier episode
    event = request("sim-0", "ep-1", 0)
    [out] = handle(phone, event)
    assert isinstance(out, ObservationRecorded)
    assert (out.episode_id, out.device_id, out.step) == ("ep-1", "sim-0", 0)
    assert out.correlation_id == "ep-1" and out.causation_id == event.event_id
    assert out.observation.result is not None and out.observation.result.name == "contacts.search"
    assert out.observation.result.ok
    assert phone.state.memory == {"gate": "B12"}  # the task's initial state was loaded
    assert step_of(phone) == 1


def test_actions_for_another_device_are_ignored(phone: SimPhone) -> None:
    memory = RunnerMemory()
    assert handle(phone, request("sim-1", "ep-1", 0), memory) == []
    assert memory.executed == 0 and memory.state.last is None and memory.dropped == 1


def test_one_memory_keeps_each_phone_of_a_runner_apart() -> None:
    """A runner of several phones: each phone's episode goes on beside the others, a redelivered
    step is replayed from that phone's own record, and the counts add up over the phones."""
    phones = {d: SimPhone(d) for d in ("hub-0", "hub-1")}
    memory = RunnerMemory()
    first = handle(phones["hub-0"], request("hub-0", "ep-a", 0), memory)
    handle(phones["hub-1"], request("hub-1", "ep-b", 0), memory)
    handle(phones["hub-0"], request("hub-0", "ep-a", 1), memory)
    assert memory.state.device_id == "hub-0" and memory.state.last.step == 1
    assert memory.states["hub-1"].episode == "ep-b" and memory.states["hub-1"].last.step == 0
    again = handle(phones["hub-1"], request("hub-1", "ep-b", 1), memory)
    assert isinstance(again[0], ObservationRecorded) and again[0].step == 1  # not "stale"
    assert (memory.executed, memory.replayed) == (4, 0)
    assert step_of(phones["hub-0"]) == 2 and step_of(phones["hub-1"]) == 2
    assert first[0].device_id == "hub-0"


def test_later_steps_continue_the_episode_in_order(phone: SimPhone) -> None:
    memory = RunnerMemory()
    outs = [handle(phone, request("sim-0", "ep-1", i), memory)[0] for i in range(3)]
    assert [o.step for o in outs] == [0, 1, 2]
    assert [o.observation.step for o in outs] == [1, 2, 3]
    assert memory.executed == 3


def test_a_redelivered_action_is_answered_without_running_it_again(phone: SimPhone) -> None:
    memory = RunnerMemory()
    handle(phone, request("sim-0", "ep-1", 0), memory)
    action = request("sim-0", "ep-1", 1)
    first = handle(phone, action, memory)
    again = handle(phone, action, memory)
    assert again == first  # the same events, same event ids: sinks dedupe them
    assert again[0].event_id == first[0].event_id
    assert step_of(phone) == 2 and memory.executed == 2 and memory.replayed == 1


def test_a_stale_older_step_is_dropped(phone: SimPhone) -> None:
    memory = RunnerMemory()
    for i in range(3):
        handle(phone, request("sim-0", "ep-1", i), memory)
    assert handle(phone, request("sim-0", "ep-1", 1), memory) == []
    assert step_of(phone) == 3


def test_a_step_of_an_episode_the_device_does_not_hold_fails_it(phone: SimPhone) -> None:
    memory = RunnerMemory()
    handle(phone, request("sim-0", "ep-1", 0), memory)
    [out] = handle(phone, request("sim-0", "ep-2", 4), memory)
    assert isinstance(out, DeviceFailed)
    assert out.reason == "unavailable" and "ep-2" in out.message
    assert step_of(phone) == 1


def test_step_zero_without_a_task_fails_with_a_sentence(phone: SimPhone) -> None:
    [out] = handle(phone, request("sim-0", "ep-1", 0, task=None))
    assert isinstance(out, DeviceFailed) and out.reason == "unavailable"
    assert "task_id" in out.message


def test_an_unknown_task_id_fails_the_episode_instead_of_crashing(phone: SimPhone) -> None:
    event = request("sim-0", "ep-1", 0).model_copy(update={"task_id": "no such task",
                                                           "task_params": None})
    [out] = handle(phone, event)
    assert isinstance(out, DeviceFailed) and out.reason == "unavailable"
    assert "no such task" in out.message


def test_a_lost_device_ends_the_episode_and_serves_the_next_one() -> None:
    phone = LosingPhone("sim-0", lose_at=2)
    memory = RunnerMemory()
    assert isinstance(handle(phone, request("sim-0", "ep-1", 0), memory)[0], ObservationRecorded)
    [lost] = handle(phone, request("sim-0", "ep-1", 1), memory)
    assert isinstance(lost, DeviceFailed) and lost.reason == "disconnected"
    assert "unplugged" in lost.message
    [after] = handle(phone, request("sim-0", "ep-1", 2), memory)
    assert isinstance(after, DeviceFailed) and after.reason == "unavailable"
    [fresh] = handle(phone, request("sim-0", "ep-2", 0), memory)
    assert isinstance(fresh, ObservationRecorded) and fresh.episode_id == "ep-2"
    assert memory.failed == 2


def test_a_hanging_device_times_out_and_is_busy_until_it_returns() -> None:
    phone = HangingPhone("sim-0")
    guard = ActionGuard(0.05)
    memory = RunnerMemory()
    try:
        [out] = handle(phone, request("sim-0", "ep-1", 0), memory, guard=guard)
        assert isinstance(out, DeviceFailed) and out.reason == "timeout"
        [busy] = handle(phone, request("sim-0", "ep-2", 0), memory, guard=guard)
        assert isinstance(busy, DeviceFailed) and busy.reason == "unavailable"
        assert "busy" in busy.message
        phone.release.set()
        guard._pending.result(timeout=10)  # the hung call finishes once released
        [ok] = handle(phone, request("sim-0", "ep-3", 0), memory, guard=guard)
        assert isinstance(ok, ObservationRecorded)
    finally:
        phone.release.set()
        guard.close()


def test_a_refused_action_reports_the_screen_and_the_reason() -> None:
    [out] = handle(RefusingPhone("sim-0"), request("sim-0", "ep-1", 0))
    assert isinstance(out, ObservationRecorded)
    assert out.observation.message is not None and "locked" in out.observation.message


def test_a_bug_in_the_device_becomes_a_crashed_failure() -> None:
    [out] = handle(CrashingPhone("sim-0"), request("sim-0", "ep-1", 0))
    assert isinstance(out, DeviceFailed) and out.reason == "crashed"
    assert "ZeroDivisionError" in out.message


def test_the_guard_runs_calls_on_its_worker_thread() -> None:
    guard = ActionGuard(5.0)
    try:
        name = guard.call(lambda: threading.current_thread().name, "probe")
        assert name.startswith("device-call")
    finally:
        guard.close()
