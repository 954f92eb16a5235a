"""An episode's outcome for training: the checker's score, success and progress (CARE's progress term)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from devices.protocol import TaskInstance

__all__ = ["SUCCESS_SCORE", "Outcome", "score_episode"]

logger = logging.getLogger(__name__)

# A rollout succeeds only with the checker's full score; partial credit is progress.
SUCCESS_SCORE = 1.0


@dataclass(frozen=True)
class Outcome:
    score: float
    success: float  # s_i: 1.0 when the checker's score is full, else 0.0
    progress: float  # share of the checker's sub-goals met


def score_episode(task: TaskInstance, phone: Any, harness: Any = None) -> Outcome:
    """The suite's checker on the phone's state after an episode.

    With the suite's `score_final_state` (devices/suite/scoring.py) and a final-state dict, its
    CheckResult gives score and progress; without it the template checker's score is used, whose
    partial credit is already the share of sub-goals met.
    """
    final_state = None
    if harness is not None and hasattr(harness, "final_state"):
        final_state = harness.final_state()
    if final_state is not None:
        try:
            from devices.suite.scoring import score_final_state
        except ImportError:
            final_state = None
        else:
            result = score_final_state(task, final_state)
            score = float(result.score)
            return Outcome(score=score, success=float(score >= SUCCESS_SCORE), progress=float(result.progress))
    from devices.suite.episode import score_state

    score = score_state(task, phone.state)
    return Outcome(score=score, success=float(score >= SUCCESS_SCORE), progress=score)
