"""Runs one episode of one task instance through the harness and scores its final state.

The policy sees the goal, the harness's catalogue and observations only; the oracle alone is
prepared with the task (it is the suite's own privileged expert).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from devices.harness.harness import Harness
from devices.harness.spec import HarnessSpec
from devices.protocol import DeviceError, TaskInstance
from devices.suite.policies import OraclePolicy, Policy
from devices.suite.scoring import score_final_state

__all__ = ["EpisodeResult", "run_episode", "score_state"]

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
    progress: float = 0.0


def score_state(task: TaskInstance, state: Any) -> float:
    """The template's checker on a state (a Harness, or anything with `to_final_json()`)."""
    final = state.final_state() if isinstance(state, Harness) else state.to_final_json()
    return score_final_state(task, final).score


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
    result = score_final_state(task, harness.final_state())
    return EpisodeResult(task_id=task.task_id, template=task.template, family=task.family,
                         score=result.score, steps=steps, finished=finished,
                         harness_version=harness.version, progress=result.progress)
