"""The runner's thin I/O shell around the pure decide/evolve: runs directives on the device.

`handle(device, event, memory)` is one message's whole trip: decide → (execute on the device
→ decide on the outcome) → evolve, returning the events to publish. `execute` is the only
place a device is touched, and it sorts what happened into a `DeviceOutcome`: a reset that
raised is `reset_failed` (the episode cannot start), a lost device `lost`, a call past its
deadline `timeout`, a device still busy with a hung call `busy`, a bug `crashed`; an action
the device refused but survived is observed again and reported with the reason.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from devices.harness.harness import Harness, device_state
from devices.protocol import Device, DeviceError, DeviceLost
from schemas.envelope import Event
from schemas.episodes import ActionRequested, DeviceFailed
from schemas.observations import Observation
from services.device_runner.decide import (
    DeviceOutcome,
    Dropped,
    Execute,
    Replay,
    RunnerMemory,
    decide,
    evolve,
)
from services.device_runner.guard import ActionGuard, ActionTimedOut, DeviceBusy

__all__ = ["execute", "handle", "perform"]

logger = logging.getLogger(__name__)


def handle(device: Device, event: ActionRequested, memory: RunnerMemory | None = None, *,
           suite_seed: int = 0, guard: ActionGuard | None = None,
           stale_after_s: float | None = None, now: datetime | None = None) -> list[Event]:
    """The events `event` produces on `device` (executing it there when it must)."""
    memory = memory if memory is not None else RunnerMemory()
    state = memory.state_for(device.device_id, suite_seed, stale_after_s)
    when = now or datetime.now(UTC)
    out: list[Event] = []
    for produced in decide(state, event, when):
        state = evolve(state, produced)
        if isinstance(produced, Replay):
            logger.info("re-publishing step %d of episode %s (redelivered action)", event.step,
                        event.episode_id)
            out.extend(produced.events)
        elif isinstance(produced, Dropped):
            if produced.why != "for another device":
                logger.warning("dropping action of %s: %s", event.episode_id, produced.why)
        elif isinstance(produced, Execute):
            outcome = execute(device, produced, guard or ActionGuard(None))
            for reported in decide(state, outcome, when):
                state = evolve(state, reported)
                out.append(reported)  # type: ignore[arg-type]
        else:  # a failure decided without the device
            out.append(produced)
    for item in out:
        if isinstance(item, DeviceFailed):
            logger.warning("device %s failed at step %d of %s (%s): %s", item.device_id,
                           item.step, item.episode_id, item.reason, item.message)
    memory.state = state
    return out


def execute(device: Device, directive: Execute, guard: ActionGuard) -> DeviceOutcome:
    """Runs one directive on the device and says what happened (never raises)."""
    request = directive.request
    device_id = device.device_id
    task = directive.task
    if task is not None:
        failed = _reset(device, request, task, guard)
        if failed is not None:
            return failed
    what = (f"{request.action.action_type} on {device_id}" if request.request == "act"
            else f"{request.request} on {device_id}")
    try:
        observation, state = guard.call(lambda: perform(device, request), what)
    except (DeviceLost, ActionTimedOut, TimeoutError, DeviceBusy) as error:
        return _unavailable(request, device_id, error)
    except DeviceError as error:  # refused, but alive: the episode goes on with the reason
        logger.warning("%s could not execute %s: %s", device_id, request.action.action_type,
                       error)
        try:
            seen = guard.call(device.observe, f"observe on {device_id}")
        except Exception as second:  # noqa: BLE001 - failing to observe means the device is gone
            return DeviceOutcome(request, "crashed", message=(
                f"{device_id} failed an action ({error}) and then could not be observed "
                f"({second})"))
        return DeviceOutcome(request, "observed",
                             observation=seen.model_copy(update={"message": str(error)}))
    except Exception as error:  # a bug in the device code must not kill the runner
        logger.exception("%s crashed executing step %d of %s", device_id, request.step,
                         request.episode_id)
        return DeviceOutcome(request, "crashed",
                             message=f"{device_id} crashed: {type(error).__name__}: {error}")
    return DeviceOutcome(request, "observed", observation=observation, device_state=state)


def _unavailable(request: ActionRequested, device_id: str, error: Exception) -> DeviceOutcome:
    """The outcome of a device that is lost, timed out or busy (checked in that order)."""
    if isinstance(error, DeviceLost):
        return DeviceOutcome(request, "lost", message=str(error))
    if isinstance(error, (ActionTimedOut, TimeoutError)):
        return DeviceOutcome(request, "timeout", message=f"{device_id} timed out: {error}")
    return DeviceOutcome(request, "busy", message=f"{device_id}: {error}")


def perform(device: Device, request: ActionRequested) -> tuple[Observation, dict | None]:
    """Carries out one request on the device: the observation after it and, for a
    'device_state' request, the device part of the final state.

    Requests other than 'act' serve a harness that runs in the rollout (RemoteDevice): they go
    to the phone itself, past the runner's own harness, as the rollout's harness would call a
    local phone (advance and call_tool spend no fault; call_tool spends no step)."""
    kind = request.request
    if kind == "act":
        return device.act(request.action), None
    phone = _phone(device)
    if kind == "advance":
        advance = getattr(phone, "advance", None)
        if advance is not None:
            advance()
        return phone.observe(), None
    if kind == "call_tool":
        action = request.action
        direct = getattr(phone, "call_tool", None)
        if direct is not None:
            result = direct(action.name, dict(action.arguments))  # type: ignore[union-attr]
        else:
            result = phone.act(action).result
        return phone.observe().model_copy(update={"result": result}), None
    if kind == "device_state":
        return phone.observe(), device_state(phone)
    return phone.observe(), None  # observe (and a bare reset on step 0)


def _phone(device: Device) -> Device:
    """The phone inside the runner's harness (open_device wraps every phone in one)."""
    return device.device if isinstance(device, Harness) else device


def _reset(device: Device, request: ActionRequested, task: object, guard: ActionGuard
           ) -> DeviceOutcome | None:
    device_id = device.device_id
    what = f"reset of {device_id} to {getattr(task, 'task_id', task)}"
    try:
        guard.call(lambda: device.reset(task), what)  # type: ignore[arg-type]
    except (DeviceLost, ActionTimedOut, TimeoutError, DeviceBusy) as error:
        return _unavailable(request, device_id, error)
    except DeviceError as error:
        return DeviceOutcome(request, "reset_failed",
                             message=f"{what} failed, so episode {request.episode_id} cannot "
                                     f"start: {error}")
    except Exception as error:
        logger.exception("%s crashed during %s", device_id, what)
        return DeviceOutcome(request, "crashed",
                             message=f"{device_id} crashed during the reset: "
                                     f"{type(error).__name__}: {error}")
    return None
