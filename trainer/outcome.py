"""An episode's outcome for training: the checker's score, success and progress (CARE's progress term)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from devices.protocol import TaskInstance

__all__ = ["SUCCESS_SCORE", "Outcome", "main_tool_calls", "score_episode"]

logger = logging.getLogger(__name__)

# A rollout succeeds only with the checker's full score; partial credit is progress.
SUCCESS_SCORE = 1.0


@dataclass(frozen=True)
class Outcome:
    score: float
    success: float  # s_i: 1.0 when the checker's score is full, else 0.0
    progress: float  # share of the checker's sub-goals met


def score_episode(task: TaskInstance, harness: Any) -> Outcome:
    """The suite's checker (`score_final_state`) on the harness's final state after an episode."""
    from devices.suite.scoring import score_final_state

    result = score_final_state(task, harness.final_state())
    score = float(result.score)
    return Outcome(score=score, success=float(score >= SUCCESS_SCORE), progress=float(result.progress))


def main_tool_calls(harness: Any, steps: int) -> int:
    """Tool calls the agent itself made (the harness's log), or its step count without a log."""
    try:
        entries = harness.final_state()["log"]
    except (AttributeError, KeyError, TypeError):
        return steps
    return sum(1 for e in entries if e.get("kind") == "tool_call" and e.get("agent", "main") == "main")
