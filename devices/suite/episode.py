"""One task instance through the harness and scored: `run_episode` plays it with the one episode
loop (`devices.harness.episode.play`) and scores the final state with the one checker
(`devices.suite.scoring.score_final_state`); `score_state` scores a state as it stands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from devices.harness.episode import play
from devices.harness.harness import Harness
from devices.harness.policy import Policy
from devices.harness.spec import HarnessSpec
from devices.protocol import TaskInstance
from devices.suite.scoring import score_final_state

__all__ = ["EpisodeResult", "run_episode", "score_state"]


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
    fault: str | None = None  # the device error that ended the episode early (an environment fault)


def score_state(task: TaskInstance, state: Any) -> float:
    """The template's checker on a state (a Harness, or anything with `to_final_json()`)."""
    final = state.final_state() if isinstance(state, Harness) else state.to_final_json()
    return score_final_state(task, final).score


def run_episode(device: Any, task: TaskInstance, policy: Policy,
                spec: HarnessSpec | None = None) -> EpisodeResult:
    """Plays `task` with `policy` on the harnessed `device`, then scores the harness's final
    state. `device` may already be a Harness (then `spec` is ignored)."""
    played = play(device, task, policy, spec=spec)
    harness = played.harness
    result = score_final_state(task, harness.final_state())
    return EpisodeResult(task_id=task.task_id, template=task.template, family=task.family,
                         score=result.score, steps=len(played.actions), finished=played.finished,
                         harness_version=harness.version, progress=result.progress,
                         fault=None if played.error is None else str(played.error))
