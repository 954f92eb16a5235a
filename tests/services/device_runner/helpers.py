"""Shared test helpers: SimPhone variants that fail on cue, and action events to feed a runner."""

from __future__ import annotations

import threading
from typing import Any

from devices.protocol import DeviceError, DeviceLost, TaskInstance
from devices.sim import SimPhone
from schemas.actions import Action, ToolCall
from schemas.episodes import ActionRequested
from services.dataflow.tasks import task_params_for

__all__ = [
    "TASK",
    "CrashingPhone",
    "HangingPhone",
    "LosingPhone",
    "RefusingPhone",
    "request",
    "step_of",
]

#: A task outside the suite: the runner rebuilds it from the instance carried in task_params.
TASK = TaskInstance(task_id="manual-dev-00000-00000001", template="manual", family="tool",
                    split="dev", index=1_000_000, seed=1, goal="Find Ann's phone number.",
                    initial_state={"memory": {"gate": "B12"}})

SEARCH = ToolCall(name="contacts.search", arguments={"query": "a"})


def request(device_id: str, episode_id: str, step: int, action: Action = SEARCH,
            task: TaskInstance | None = TASK) -> ActionRequested:
    """An action request; step 0 carries the whole task instance so any runner can reset."""
    first = step == 0 and task is not None
    return ActionRequested(source="test/1", correlation_id=episode_id, episode_id=episode_id,
                           device_id=device_id, step=step, action=action,
                           task_id=task.task_id if first else None,
                           task_params=task_params_for(task) if first else None)


def step_of(phone: Any) -> int:
    """How many actions the phone has executed in this episode."""
    return phone.observe().step


class LosingPhone(SimPhone):
    """A SimPhone that disappears (raises DeviceLost) on its `lose_at`-th act, then comes back."""

    def __init__(self, device_id: str, lose_at: int) -> None:
        super().__init__(device_id)
        self.lose_at = lose_at
        self.acts = 0

    def act(self, action: Action) -> Any:
        self.acts += 1
        if self.acts == self.lose_at:
            raise DeviceLost(f"{self.device_id} was unplugged")
        return super().act(action)


class HangingPhone(SimPhone):
    """A SimPhone whose act blocks until the test releases it."""

    def __init__(self, device_id: str) -> None:
        super().__init__(device_id)
        self.release = threading.Event()

    def act(self, action: Action) -> Any:
        self.release.wait()
        return super().act(action)


class RefusingPhone(SimPhone):
    """A SimPhone that refuses every act with a DeviceError but stays observable."""

    def act(self, action: Action) -> Any:
        raise DeviceError("the screen is locked; unlock it and try again")


class CrashingPhone(SimPhone):
    """A SimPhone with a bug in act."""

    def act(self, action: Action) -> Any:
        raise ZeroDivisionError("division by zero")
