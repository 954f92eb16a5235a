"""Fixtures for SimPhone tests: a fresh phone reset to a plain task."""

from __future__ import annotations

from typing import Any

import pytest

from devices.protocol import TaskInstance
from devices.sim.phone import SimPhone


def make_task(initial_state: dict[str, Any] | None = None, seed: int = 7, max_steps: int = 200) -> TaskInstance:
    return TaskInstance(task_id=f"t-{seed}", template="test", family="tool", split="train", index=0,
                        seed=seed, goal="test goal", initial_state=initial_state or {},
                        max_steps=max_steps)


@pytest.fixture
def phone() -> SimPhone:
    p = SimPhone()
    p.reset(make_task())
    return p
