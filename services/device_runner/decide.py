"""The runner's domain logic as pure functions: what one message means for one device.

`decide(state, message, now)` never touches a device. For an `ActionRequested` it answers
with a directive — `Execute` (reset first on step 0), `Replay` (a redelivered step: publish
the events already recorded, same event ids) — or with a `DeviceFailed` it can tell without
the device (no task, unknown task, an episode this device does not hold), or nothing (another
device's action, a stale step, an action older than `stale_after_s`). For a `DeviceOutcome`
(what the I/O shell saw when it executed a directive) it answers with the event to publish:
`ObservationRecorded`, or `DeviceFailed` with the reason named — a reset that failed is
`reset_failed`, never an observation. An observation whose screen is the one already sent in
this episode carries no screen and names the step that sent it (`screen_as_step`): about nine
answers in ten are tool calls that leave the screen as it was, and screens are two thirds of
an answer's bytes.

`evolve(state, event)` folds a directive or a published event into the next state. The thin
I/O shell that runs directives on a device is services.device_runner.execute.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from dataclasses import dataclass
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Literal

from devices.protocol import TaskInstance
from schemas.envelope import Event
from schemas.episodes import ActionRequested, DeviceFailed, ObservationRecorded
from schemas.observations import Observation, UIElement
from services.device_runner.tasks import TaskNotResolved, resolve_task

__all__ = [
    "SOURCE",
    "DeviceOutcome",
    "Dropped",
    "Execute",
    "Executed",
    "OutcomeKind",
    "Replay",
    "RunnerMemory",
    "RunnerState",
    "decide",
    "evolve",
    "response_id",
]

logger = logging.getLogger(__name__)


def _source() -> str:
    try:
        return f"device-runner/{version('flywheel')}"
    except PackageNotFoundError:  # running from a bare checkout
        return "device-runner/0.0.0"


#: The envelope `source` of every event this service produces.
SOURCE = _source()

#: Namespace of response ids (uuid5 of the action's event id).
RESPONSE_NAMESPACE = uuid.UUID("6b1f3c52-2f9e-4d0b-9a57-3f0c1d2e8a41")


def response_id(action: ActionRequested) -> str:
    """The event id of the one event that answers `action`, derived from the action's id: an
    action redelivered to a restarted runner (which lost its memory) is answered under the same
    id, so every sink that dedupes on event ids keeps exactly one answer per action."""
    return uuid.uuid5(RESPONSE_NAMESPACE, action.event_id).hex


FailureReason = Literal["disconnected", "timeout", "crashed", "unavailable", "reset_failed"]

#: What executing a directive came to, as the I/O shell saw it.
OutcomeKind = Literal["observed", "reset_failed", "lost", "timeout", "busy", "crashed"]

_REASONS: dict[str, FailureReason] = {"reset_failed": "reset_failed", "lost": "disconnected",
                                      "timeout": "timeout", "busy": "unavailable",
                                      "crashed": "crashed"}


@dataclass(frozen=True)
class Executed:
    """The last step a device executed and the events it produced for it; after an
    observation, the screen the device shows and the step whose answer carried it in full
    (`screen_step` None after a failure)."""

    episode_id: str
    step: int
    events: tuple[Event, ...]
    screen: tuple[UIElement, ...] = ()
    screen_step: int | None = None


@dataclass(frozen=True)
class RunnerState:
    """What a runner knows between messages: its device, the last executed step, the episode
    whose state the device holds (None before any reset and after a failure), and counts."""

    device_id: str
    suite_seed: int = 0
    stale_after_s: float | None = None
    last: Executed | None = None
    episode: str | None = None
    executed: int = 0  # actions actually run on the device (not replays)
    replayed: int = 0  # redelivered actions answered from `last`
    failed: int = 0  # device.failed events produced
    dropped: int = 0  # other devices' actions, stale steps and expired actions


@dataclass(frozen=True)
class Execute:
    """Run `request.action` on the device, after resetting it to `task` when one is given."""

    request: ActionRequested
    task: TaskInstance | None


@dataclass(frozen=True)
class Replay:
    """A redelivered step: publish `events` again (same ids; sinks dedupe them)."""

    request: ActionRequested
    events: tuple[Event, ...]


@dataclass(frozen=True)
class Dropped:
    """An action this runner does not act on, and why (kept for the counts and the log)."""

    request: ActionRequested
    why: str


@dataclass(frozen=True)
class DeviceOutcome:
    """What happened when a directive ran: the observation, or the failure and its sentence."""

    request: ActionRequested
    kind: OutcomeKind
    observation: Observation | None = None
    message: str = ""
    device_state: dict[str, Any] | None = None  # the answer to a 'device_state' request


Directive = Execute | Replay | Dropped
Produced = Directive | ObservationRecorded | DeviceFailed


def decide(state: RunnerState, message: ActionRequested | DeviceOutcome, now: datetime
           ) -> list[Produced]:
    """The directives or events `message` leads to (pure: no device, no clock but `now`)."""
    if isinstance(message, DeviceOutcome):
        return [_report(state, message)]
    event = message
    if event.device_id != state.device_id:
        return [Dropped(event, "for another device")]
    last = state.last
    if last is not None and last.episode_id == event.episode_id and not _restarts(last, event):
        if last.step == event.step:
            return [Replay(event, last.events)]
        if event.step < last.step:
            return [Dropped(event, f"stale: step {event.step} of {event.episode_id}, already "
                                   f"at step {last.step}")]
    if state.stale_after_s is not None:
        age = (now - event.occurred_at).total_seconds()
        if age > state.stale_after_s:
            return [Dropped(event, f"expired: requested {age:.0f} s ago, older than "
                                   f"{state.stale_after_s:g} s")]
    if event.step == 0:
        if event.task_id is None:
            return [_failed(event, "unavailable", f"step 0 of episode {event.episode_id} carries "
                                                  f"no task_id, so {event.device_id} cannot be "
                                                  f"reset; send the task id with the first action")]
        try:
            task = resolve_task(event.task_id, event.task_params, state.suite_seed)
        except TaskNotResolved as error:
            return [_failed(event, "unavailable", str(error))]
        return [Execute(event, task)]
    if state.episode != event.episode_id:
        return [_failed(event, "unavailable",
                        f"{event.device_id} does not hold the state of episode {event.episode_id} "
                        f"(it was restarted, failed, or moved on); start the episode again from "
                        f"step 0")]
    return [Execute(event, None)]


def evolve(state: RunnerState, event: Produced) -> RunnerState:
    """The state after `event` (a directive taken or an event published)."""
    if isinstance(event, Replay):
        return dataclasses.replace(state, replayed=state.replayed + 1)
    if isinstance(event, Dropped):
        return dataclasses.replace(state, dropped=state.dropped + 1)
    if isinstance(event, Execute):
        return state
    if event.device_id != state.device_id:
        return state
    if isinstance(event, ObservationRecorded):
        last = state.last
        if event.screen_as_step is not None and last is not None:  # the screen stays as it was
            executed = Executed(event.episode_id, event.step, (event,), last.screen, last.screen_step)
        else:
            executed = Executed(event.episode_id, event.step, (event,),
                                tuple(event.observation.screen), event.step)
        return dataclasses.replace(state, last=executed, episode=event.episode_id,
                                   executed=state.executed + 1)
    executed = Executed(event.episode_id, event.step, (event,))
    return dataclasses.replace(state, last=executed, episode=None, failed=state.failed + 1)


def _restarts(last: Executed, event: ActionRequested) -> bool:
    """A step 0 that is not the one already answered (another request id) starts the episode
    again (a rollout re-running it after a crash or a retry): reset, never replay."""
    return event.step == 0 and all(e.causation_id != event.event_id for e in last.events)


def _report(state: RunnerState, outcome: DeviceOutcome) -> ObservationRecorded | DeviceFailed:
    event = outcome.request
    if outcome.kind == "observed" and outcome.observation is not None:
        observation, as_step = outcome.observation, _unchanged_since(state.last, event, outcome.observation)
        if as_step is not None:
            observation = observation.model_copy(update={"screen": []})
        return ObservationRecorded(event_id=response_id(event), source=SOURCE,
                                   episode_id=event.episode_id,
                                   device_id=event.device_id, step=event.step,
                                   observation=observation, device_state=outcome.device_state,
                                   screen_as_step=as_step, **event.caused())
    reason = _REASONS.get(outcome.kind, "crashed")
    return _failed(event, reason, outcome.message or f"{event.device_id}: {outcome.kind}")


def _unchanged_since(last: Executed | None, event: ActionRequested, observation: Observation
                     ) -> int | None:
    """The step whose answer carried the screen `observation` shows, when it is unchanged
    since then in this episode (so it need not travel again); None when it must be sent: a
    reset (step 0: the reader starts afresh), a new episode, a changed or empty screen."""
    if (last is None or last.screen_step is None or event.step == 0
            or last.episode_id != event.episode_id or not observation.screen):
        return None
    return last.screen_step if tuple(observation.screen) == last.screen else None


def _failed(event: ActionRequested, reason: FailureReason, message: str) -> DeviceFailed:
    return DeviceFailed(event_id=response_id(event), source=SOURCE, episode_id=event.episode_id,
                        device_id=event.device_id,
                        step=event.step, reason=reason, message=message, **event.caused())


def _live_count(name: str) -> property:
    """A read-only property of RunnerMemory: the count `name` summed over its devices' states
    (0 before the first message)."""
    return property(lambda memory: sum(getattr(state, name) for state in memory.states.values()))


class RunnerMemory:
    """A mutable holder of the runner's states, one per device it serves, so callers can read
    live counts (`executed`, `replayed`, `failed`, `dropped`: those of RunnerState, summed over
    the devices) and `state`, the state of the device that handled the latest message."""

    executed = _live_count("executed")
    replayed = _live_count("replayed")
    failed = _live_count("failed")
    dropped = _live_count("dropped")

    def __init__(self, state: RunnerState | None = None) -> None:
        self.states: dict[str, RunnerState] = {}
        self._current: str | None = None
        if state is not None:
            self.state = state

    @property
    def state(self) -> RunnerState | None:
        return self.states.get(self._current) if self._current is not None else None

    @state.setter
    def state(self, state: RunnerState) -> None:
        self.states[state.device_id] = state
        self._current = state.device_id

    def state_for(self, device_id: str, suite_seed: int = 0,
                  stale_after_s: float | None = None) -> RunnerState:
        """The state of `device_id` (a fresh one the first time), now the current state."""
        state = self.states.get(device_id)
        self.state = state if state is not None else RunnerState(device_id, suite_seed, stale_after_s)
        return self.state  # type: ignore[return-value]
