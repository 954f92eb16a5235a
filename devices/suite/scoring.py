"""Scoring from (task, final-state JSON): the verifier's entry point and the evaluator's.

The initial state is recomputed from the task (the default world plus the task's
initial_state overlay), so a stored final state is all that is needed to score an episode.
"""

from __future__ import annotations

import logging
from typing import Any

from devices.protocol import TaskInstance
from devices.suite.diff import CheckResult
from devices.suite.registry import get_template
from devices.suite.state_view import StateView

__all__ = ["CheckResult", "initial_view", "score_final_state"]

logger = logging.getLogger(__name__)


def initial_view(task: TaskInstance, world_seed: int | None = None) -> StateView:
    """The state right after reset(task), as a StateView."""
    from devices.sim.phone import initial_state_of  # the sandbox rebuilds the start state

    return StateView.from_json(initial_state_of(task, world_seed).to_final_json())


def score_final_state(task: TaskInstance, final_state: dict[str, Any],
                      world_seed: int | None = None) -> CheckResult:
    """The template's checker on the episode's final state (contract §3)."""
    template = get_template(task.template)
    after = StateView.from_json(final_state)
    before = initial_view(task, world_seed)
    result = template.check(dict(task.params), before, after)
    if not 0.0 <= result.score <= 1.0:
        raise ValueError(f"checker of {task.template} returned {result.score}, outside [0, 1]")
    return result
