"""Runs one episode of one task instance through the harness and scores its final state.

The policy sees the goal, the harness's catalogue and observations only; the oracle alone is
prepared with the task (it is the suite's own privileged expert).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from devices.harness.final_state import FinalStateView
from devices.harness.harness import Harness
from devices.harness.spec import HarnessSpec
from devices.protocol import DeviceError, TaskInstance
from devices.suite.policies import OraclePolicy, Policy
from devices.suite.registry import get_template

__all__ = ["EpisodeResult", "run_episode", "score_final_state_json", "score_state"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class EpisodeResult:
    """What one episode scored, how it ended, and under which harness."""

    task_id: str
    template: str
    family: str
    score: float
    steps: int
    finished: bool
    harness_version: str


def score_state(task: TaskInstance, state: Any) -> float:
    """The template's checker on `state`, validated to lie in [0, 1]."""
    score = float(get_template(task.template).is_successful(state, dict(task.params)))
    if not 0.0 <= score <= 1.0:
        raise ValueError(f"checker of {task.template} returned {score}, outside [0, 1]")
    return score


def score_final_state_json(task: TaskInstance, final_state: dict[str, Any]) -> float:
    """The checker's score from the final-state JSON alone (what a verifier stores)."""
    return score_state(task, FinalStateView.from_json(final_state))


def run_episode(device: Any, task: TaskInstance, policy: Policy,
                spec: HarnessSpec | None = None) -> EpisodeResult:
    """Resets the harnessed `device` to `task`, lets `policy` act up to max_steps, then scores
    the harness's final state. `device` may already be a Harness (then `spec` is ignored)."""
    harness = device if isinstance(device, Harness) else Harness(device, spec)
    observation = harness.reset(task)
    if isinstance(policy, OraclePolicy):
        policy.prepare(task)
    policy.begin(task.goal, harness.catalogue())
    steps, finished = 0, False
    while steps < task.max_steps and not observation.done:
        action = policy.next_action(observation)
        try:
            observation = harness.act(action)
        except DeviceError as exc:
            logger.warning("episode %s ended early: %s", task.task_id, exc)
            break
        steps += 1
        finished = observation.done
    score = score_final_state_json(task, harness.final_state())
    return EpisodeResult(task_id=task.task_id, template=task.template, family=task.family,
                         score=score, steps=steps, finished=finished,
                         harness_version=harness.version)
