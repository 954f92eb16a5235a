"""Runs one episode of one task instance on a SimPhone and scores it from the phone's state."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from devices.protocol import DeviceError, TaskInstance
from devices.suite.policies import Policy
from devices.suite.scoring import score_final_state

__all__ = ["EpisodeResult", "run_episode", "score_state"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class EpisodeResult:
    """What one episode scored, and how it ended."""

    task_id: str
    template: str
    family: str
    score: float
    steps: int
    finished: bool


def score_state(task: TaskInstance, state: Any) -> float:
    """The template's checker on a device state (anything with `to_final_json()`), in [0, 1]."""
    return score_final_state(task, state.to_final_json()).score


def run_episode(phone: Any, task: TaskInstance, policy: Policy) -> EpisodeResult:
    """Resets `phone` to `task`, lets `policy` act up to max_steps, then scores the state."""
    observation = phone.reset(task)
    policy.begin(task, phone)
    steps, finished = 0, False
    while steps < task.max_steps and not observation.done:
        action = policy.next_action(observation)
        try:
            observation = phone.act(action)
        except DeviceError as exc:
            logger.warning("episode %s ended early: %s", task.task_id, exc)
            break
        steps += 1
        finished = observation.done
    return EpisodeResult(task_id=task.task_id, template=task.template, family=task.family,
                         score=score_state(task, phone.state), steps=steps, finished=finished)
