"""The evaluator's pure decisions: what to evaluate for each checkpoint or harness event."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Literal

from schemas.envelope import Event
from schemas.harness import HarnessPromoted
from schemas.training import CheckpointSaved

__all__ = ["EvalJob", "EvaluatorState", "decide", "evolve"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class EvalJob:
    subject: Literal["checkpoint", "harness"]
    subject_id: str
    checkpoint_id: str
    causation_id: str
    correlation_id: str


@dataclass(frozen=True)
class EvaluatorState:
    """The newest checkpoint (a harness version is evaluated with it) and what was already reported."""

    latest_checkpoint: str | None = None
    done: frozenset[tuple[str, str]] = field(default_factory=frozenset)


def decide(state: EvaluatorState, event: Event) -> list[EvalJob]:
    if isinstance(event, CheckpointSaved):
        key = ("checkpoint", event.checkpoint_id)
        if key in state.done:
            return []
        return [EvalJob("checkpoint", event.checkpoint_id, event.checkpoint_id, event.event_id, event.correlation_id)]
    if isinstance(event, HarnessPromoted):
        if state.latest_checkpoint is None:
            logger.warning("harness %s promoted before any checkpoint; nothing to evaluate it with", event.harness)
            return []
        key = ("harness", event.harness)
        if key in state.done:
            return []
        return [EvalJob("harness", event.harness, state.latest_checkpoint, event.event_id, event.correlation_id)]
    return []


def evolve(state: EvaluatorState, job: EvalJob) -> EvaluatorState:
    latest = job.checkpoint_id if job.subject == "checkpoint" else state.latest_checkpoint
    return replace(state, latest_checkpoint=latest, done=state.done | {(job.subject, job.subject_id)})
