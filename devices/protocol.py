"""The device protocol every phone implements (SimPhone, AdbPhone) and the task instance it resets to."""

from __future__ import annotations

import logging
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import Field, JsonValue

from schemas.actions import Action
from schemas.envelope import Frozen
from schemas.observations import Observation
from schemas.tasks import Family, Split

__all__ = ["MAX_FAULT_SHARE", "Device", "DeviceError", "DeviceLost", "TaskInstance", "declares_bounded_calls",
           "too_many_faults"]

#: More environment faults (episodes a device error ended) than this share of a run's episodes and
#: its score says little of the policy: `suite eval` reports it and exits non-zero.
MAX_FAULT_SHARE = 0.2


def too_many_faults(fault_share: float) -> bool:
    """Whether a run's share of faulted episodes is over MAX_FAULT_SHARE (sim and phone alike)."""
    return fault_share > MAX_FAULT_SHARE


logger = logging.getLogger(__name__)


def declares_bounded_calls(obj: object) -> bool:
    """Whether `obj`'s own class declares `bounded_calls = True`: every call is in-process work
    that cannot block, so a caller may skip its per-call timeout thread. A subclass does not
    inherit the promise (it may override a call with one that waits); an object may also say
    so through a `bounded_calls` property of its class (a harness, from the device it wraps)."""
    declared = type(obj).__dict__.get("bounded_calls", False)
    if isinstance(declared, property):
        return bool(getattr(obj, "bounded_calls", False))
    return declared is True


class TaskInstance(Frozen):
    """One concrete, seeded task: what the device resets to and what the agent is asked.

    `initial_state` is declarative (app name → table name → rows, plus the agent's
    memory and settings) so any device can load it: SimPhone writes it into its
    in-memory database, AdbPhone pushes it through content providers and settings.
    """

    task_id: str = Field(min_length=1)
    template: str = Field(min_length=1)
    family: Family
    split: Split
    index: int = Field(ge=0)
    seed: int = Field(ge=0, description="Seeds the instance's state and its fault generator.")
    params: dict[str, JsonValue] = Field(default_factory=dict)
    goal: str = Field(min_length=1)
    initial_state: dict[str, JsonValue] = Field(default_factory=dict)
    start_clock_ms: int = Field(default=1_767_254_400_000, ge=0, description="2026-01-01T08:00Z.")
    max_steps: int = Field(default=30, ge=1)
    apps: list[str] = Field(default_factory=list,
                            description="Apps whose tools the harness shows; empty means all.")
    tier: Literal["easy", "medium", "hard"] | None = Field(
        default=None, description="Difficulty by oracle actions and dependent lookups.")


class DeviceError(RuntimeError):
    """A device could not carry out a request; the episode may go on."""


class DeviceLost(DeviceError):
    """The device disappeared or stopped answering; the episode must end with a failure event."""


@runtime_checkable
class Device(Protocol):
    """A phone the loop can drive. Every method returns or raises; none blocks forever."""

    device_id: str

    def reset(self, task: TaskInstance) -> Observation:
        """Wipes the device, loads `task.initial_state`, sets the clock; returns the first view."""
        ...

    def observe(self) -> Observation:
        """The current view without acting (does not advance the clock)."""
        ...

    def act(self, action: Action) -> Observation:
        """Executes one action and returns what the device shows afterwards."""
        ...

    def snapshot(self) -> Any:
        """An opaque, immutable handle on the full device state."""
        ...

    def restore(self, snapshot: Any) -> None:
        """Puts the device back into a state taken by `snapshot()`."""
        ...

    def fork(self) -> Device:
        """An independent copy of this device in its current state."""
        ...

    def close(self) -> None:
        ...
