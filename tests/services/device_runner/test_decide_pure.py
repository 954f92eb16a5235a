"""decide/evolve without a device or a broker: directives, replays, failures named, the fold."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from schemas.episodes import DeviceFailed, ObservationRecorded
from schemas.observations import Observation, UIElement
from services.device_runner.decide import (
    DeviceOutcome,
    Dropped,
    Execute,
    Replay,
    RunnerState,
    decide,
    evolve,
)
from tests.services.device_runner.helpers import TASK, request

NOW = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
SEEN = Observation(step=1, clock_ms=0)


def _run(state: RunnerState, step: int, episode: str = "ep-1") -> tuple[RunnerState, object]:
    """Feeds one action and, when told to execute, a successful outcome."""
    [directive] = decide(state, request("sim-0", episode, step), NOW)
    state = evolve(state, directive)
    if not isinstance(directive, Execute):
        return state, directive
    [event] = decide(state, DeviceOutcome(directive.request, "observed", SEEN), NOW)
    return evolve(state, event), event


def test_step_zero_is_a_reset_then_the_action() -> None:
    [directive] = decide(RunnerState("sim-0"), request("sim-0", "ep-1", 0), NOW)
    assert isinstance(directive, Execute) and directive.task is not None
    assert directive.task.task_id == TASK.task_id


def test_the_fold_tracks_the_episode_and_counts() -> None:
    state = RunnerState("sim-0")
    for step in range(3):
        state, event = _run(state, step)
        assert isinstance(event, ObservationRecorded) and event.step == step
    assert (state.episode, state.last.step, state.executed) == ("ep-1", 2, 3)


def test_a_redelivered_step_replays_the_same_events() -> None:
    action = request("sim-0", "ep-1", 0)
    [directive] = decide(RunnerState("sim-0"), action, NOW)
    state = evolve(RunnerState("sim-0"), directive)
    [first] = decide(state, DeviceOutcome(action, "observed", SEEN), NOW)
    state = evolve(state, first)
    [again] = decide(state, action, NOW)  # the same record, delivered again
    state = evolve(state, again)
    assert isinstance(again, Replay) and again.events == (first,)
    assert state.replayed == 1 and state.executed == 1
    state, later = _run(state, 1)  # a redelivered later step replays whatever its request id
    state, twice = _run(state, 1)
    assert isinstance(twice, Replay) and twice.events == (later,)


def test_a_new_step_zero_of_the_same_episode_resets_again() -> None:
    """A rollout re-running an episode (after its crash, or a retry) sends a new step-0 request:
    the runner resets again instead of replaying the old answer or dropping it as stale."""
    state, _ = _run(RunnerState("sim-0"), 0)
    state, _ = _run(state, 1)
    [directive] = decide(state, request("sim-0", "ep-1", 0), NOW)
    assert isinstance(directive, Execute) and directive.task is not None


def test_other_devices_stale_steps_and_expired_actions_are_dropped() -> None:
    state = RunnerState("sim-0", stale_after_s=60)
    [other] = decide(state, request("sim-9", "ep-1", 0), NOW)
    assert isinstance(other, Dropped)
    for step in range(3):
        state, _ = _run(state, step)
    [old_step] = decide(state, request("sim-0", "ep-1", 1), NOW)
    assert isinstance(old_step, Dropped) and "stale" in old_step.why
    late = request("sim-0", "ep-2", 0)
    [expired] = decide(state, late, late.occurred_at + timedelta(seconds=61))
    assert isinstance(expired, Dropped) and "expired" in expired.why
    [fresh] = decide(state, late, late.occurred_at + timedelta(seconds=59))
    assert isinstance(fresh, Execute)


def test_a_failed_reset_is_device_failed_with_its_reason_never_an_observation() -> None:
    state = RunnerState("sim-0")
    state, _ = _run(state, 0)
    [directive] = decide(state, request("sim-0", "ep-2", 0), NOW)
    [event] = decide(state, DeviceOutcome(directive.request, "reset_failed",
                                          message="reset failed: provider refused"), NOW)
    assert isinstance(event, DeviceFailed) and event.reason == "reset_failed"
    assert event.step == 0 and event.episode_id == "ep-2"
    state = evolve(state, event)
    assert state.episode is None and state.failed == 1
    [next_step] = decide(state, request("sim-0", "ep-2", 1), NOW)
    assert isinstance(next_step, DeviceFailed) and next_step.reason == "unavailable"


def test_each_failure_kind_has_its_reason() -> None:
    event = request("sim-0", "ep-1", 0)
    reasons = {kind: decide(RunnerState("sim-0"), DeviceOutcome(event, kind, message="x"),
                            NOW)[0].reason
               for kind in ("reset_failed", "lost", "timeout", "busy", "crashed")}
    assert reasons == {"reset_failed": "reset_failed", "lost": "disconnected",
                       "timeout": "timeout", "busy": "unavailable", "crashed": "crashed"}


def test_decide_and_evolve_do_not_mutate_their_input() -> None:
    state = RunnerState("sim-0")
    frozen = dataclasses.replace(state)
    _run(state, 0)
    assert state == frozen


SCREEN_A = [UIElement(text="Inbox"), UIElement(text="Compose")]
SCREEN_B = [UIElement(text="Draft")]


def _answer(state: RunnerState, step: int, screen: list[UIElement], episode: str = "ep-1"
            ) -> tuple[RunnerState, ObservationRecorded]:
    [directive] = decide(state, request("sim-0", episode, step), NOW)
    state = evolve(state, directive)
    assert isinstance(directive, Execute)
    seen = Observation(step=step, clock_ms=0, screen=screen)
    [event] = decide(state, DeviceOutcome(directive.request, "observed", seen), NOW)
    assert isinstance(event, ObservationRecorded)
    return evolve(state, event), event


def test_an_unchanged_screen_is_named_by_the_step_that_sent_it_not_sent_again() -> None:
    state, first = _answer(RunnerState("sim-0"), 0, SCREEN_A)
    assert first.screen_as_step is None and first.observation.screen == SCREEN_A  # a reset: in full
    state, same = _answer(state, 1, SCREEN_A)
    assert same.screen_as_step == 0 and same.observation.screen == []
    state, still = _answer(state, 2, SCREEN_A)
    assert still.screen_as_step == 0  # the step that carried it, not the one that named it
    state, changed = _answer(state, 3, SCREEN_B)
    assert changed.screen_as_step is None and changed.observation.screen == SCREEN_B
    state, back = _answer(state, 4, SCREEN_A)
    assert back.screen_as_step is None  # only the last screen sent is named
    state, _ = _answer(state, 5, [])
    state, empty = _answer(state, 6, [])
    assert empty.screen_as_step is None  # nothing to save on an empty screen


def test_a_screen_is_sent_in_full_after_a_reset_and_in_a_new_episode() -> None:
    state, _ = _answer(RunnerState("sim-0"), 0, SCREEN_A)
    state, _ = _answer(state, 1, SCREEN_A)
    state, again = _answer(state, 0, SCREEN_A)  # the same episode started again
    assert again.screen_as_step is None
    state, _ = _answer(state, 1, SCREEN_A)
    state, other = _answer(state, 0, SCREEN_A, episode="ep-2")  # the next episode
    assert other.screen_as_step is None
    state, named = _answer(state, 1, SCREEN_A, episode="ep-2")
    assert named.screen_as_step == 0


def test_a_failure_forgets_the_screen() -> None:
    state, _ = _answer(RunnerState("sim-0"), 0, SCREEN_A)
    [failed] = decide(state, DeviceOutcome(request("sim-0", "ep-1", 1), "lost", message="gone"), NOW)
    state = evolve(state, failed)
    assert state.last is not None and state.last.screen_step is None
