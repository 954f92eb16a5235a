"""The runner's domain logic: what events one requested action produces on one device.

`decide` executes the action on the device (the only side effect) and returns the events
to publish: an ObservationRecorded, or a DeviceFailed when the device is lost, hangs or
crashes. It remembers the last executed step per device so that a redelivered action is
answered with the events already recorded (same event ids) instead of running twice.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Literal

from devices.protocol import Device, DeviceError, DeviceLost
from schemas.envelope import Event
from schemas.episodes import ActionRequested, DeviceFailed, ObservationRecorded
from schemas.observations import Observation
from services.device_runner.guard import ActionGuard, ActionTimedOut, DeviceBusy
from services.device_runner.tasks import TaskNotResolved, resolve_task

__all__ = ["SOURCE", "Executed", "RunnerMemory", "decide", "response_id"]

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


FailureReason = Literal["disconnected", "timeout", "crashed", "unavailable"]


@dataclass(frozen=True)
class Executed:
    """The last step a device executed and the events it produced for it."""

    episode_id: str
    step: int
    events: tuple[Event, ...]


@dataclass
class RunnerMemory:
    """What a runner keeps between actions, per device: the last executed step and the
    episode whose state the device holds (None after a failure or before any reset)."""

    last: dict[str, Executed] = field(default_factory=dict)
    episode: dict[str, str | None] = field(default_factory=dict)
    executed: int = 0  # actions actually run on a device (not replays)
    replayed: int = 0  # redelivered actions answered from `last`
    failed: int = 0  # device.failed events produced


def decide(device: Device, event: ActionRequested, memory: RunnerMemory | None = None, *,
           suite_seed: int = 0, guard: ActionGuard | None = None) -> list[Event]:
    """The events `event` produces on `device` (executing it there); [] if it is not for it."""
    if event.device_id != device.device_id:
        return []
    memory = memory if memory is not None else RunnerMemory()
    last = memory.last.get(device.device_id)
    if last is not None and last.episode_id == event.episode_id:
        if last.step == event.step:
            memory.replayed += 1
            logger.info("re-publishing step %d of episode %s (redelivered action)", event.step,
                        event.episode_id)
            return list(last.events)
        if event.step < last.step:
            logger.warning("dropping stale action: step %d of episode %s, already at step %d",
                           event.step, event.episode_id, last.step)
            return []
    events = [_execute(device, event, memory, suite_seed, guard or ActionGuard(None))]
    memory.last[device.device_id] = Executed(event.episode_id, event.step, tuple(events))
    return list(events)


def _execute(device: Device, event: ActionRequested, memory: RunnerMemory, suite_seed: int,
             guard: ActionGuard) -> Event:
    device_id = device.device_id
    if event.step == 0:
        if event.task_id is None:
            return _failed(event, memory, "unavailable",
                           f"step 0 of episode {event.episode_id} carries no task_id, so "
                           f"{device_id} cannot be reset; send the task id with the first action")
        try:
            task = resolve_task(event.task_id, event.task_params, suite_seed)
        except TaskNotResolved as error:
            return _failed(event, memory, "unavailable", str(error))
    elif memory.episode.get(device_id) != event.episode_id:
        return _failed(event, memory, "unavailable",
                       f"{device_id} does not hold the state of episode {event.episode_id} (it "
                       f"was restarted, failed, or moved on); start the episode again from step 0")
    try:
        if event.step == 0:
            guard.call(lambda: device.reset(task), f"reset of {device_id} to {task.task_id}")
            memory.episode[device_id] = event.episode_id
        observation = guard.call(lambda: device.act(event.action),
                                 f"{event.action.action_type} on {device_id}")
    except DeviceLost as error:
        return _failed(event, memory, "disconnected", str(error))
    except (ActionTimedOut, TimeoutError) as error:
        return _failed(event, memory, "timeout", f"{device_id} timed out: {error}")
    except DeviceBusy as error:
        return _failed(event, memory, "unavailable", f"{device_id}: {error}")
    except DeviceError as error:  # the action failed but the device is alive: the episode goes on
        return _after_action_error(device, event, memory, guard, error)
    except Exception as error:  # a bug in the device code must not kill the runner
        logger.exception("%s crashed executing step %d of %s", device_id, event.step,
                         event.episode_id)
        return _failed(event, memory, "crashed",
                       f"{device_id} crashed: {type(error).__name__}: {error}")
    memory.executed += 1
    return _recorded(event, observation)


def _after_action_error(device: Device, event: ActionRequested, memory: RunnerMemory,
                        guard: ActionGuard, error: DeviceError) -> Event:
    logger.warning("%s could not execute %s: %s", device.device_id, event.action.action_type,
                   error)
    try:
        observation = guard.call(device.observe, f"observe on {device.device_id}")
    except Exception as second:  # noqa: BLE001 - any failure to observe means the device is gone
        return _failed(event, memory, "crashed",
                       f"{device.device_id} failed an action ({error}) and then could not be "
                       f"observed ({second})")
    memory.executed += 1
    return _recorded(event, observation.model_copy(update={"message": str(error)}))


def _recorded(event: ActionRequested, observation: Observation) -> ObservationRecorded:
    return ObservationRecorded(event_id=response_id(event), source=SOURCE,
                               episode_id=event.episode_id,
                               device_id=event.device_id, step=event.step,
                               observation=observation, **event.caused())


def _failed(event: ActionRequested, memory: RunnerMemory, reason: FailureReason, message: str
            ) -> DeviceFailed:
    logger.warning("device %s failed at step %d of %s (%s): %s", event.device_id, event.step,
                   event.episode_id, reason, message)
    memory.episode[event.device_id] = None
    memory.failed += 1
    return DeviceFailed(event_id=response_id(event), source=SOURCE,
                        episode_id=event.episode_id, device_id=event.device_id,
                        step=event.step, reason=reason, message=message, **event.caused())
