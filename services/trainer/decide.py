"""The trainer's pure decisions: which training job a message asks for, and the state it folds into."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Literal

from schemas.envelope import Event
from schemas.training import DatasetSnapshotted

__all__ = ["TrainJob", "TrainerState", "decide", "evolve"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainJob:
    """Train `stage` on the snapshot at `path`, starting from the trainer's current model."""

    stage: Literal["sft", "rl"]
    snapshot_id: str
    path: str
    checkpoint_id: str
    causation_id: str
    correlation_id: str


@dataclass(frozen=True)
class TrainerState:
    """The model the next job starts from, and the snapshots already trained on (redelivery is a no-op)."""

    current_model: str
    trained: frozenset[str] = field(default_factory=frozenset)


def decide(state: TrainerState, event: Event) -> list[TrainJob]:
    """An SFT snapshot → SFT; an RL snapshot → GRPO+CARE; an eval snapshot, another event or a repeat → nothing."""
    if not isinstance(event, DatasetSnapshotted) or event.kind == "eval":
        return []
    if event.snapshot_id in state.trained:
        logger.info("snapshot %s was already trained on; skipping the redelivery", event.snapshot_id)
        return []
    return [TrainJob(stage=event.kind, snapshot_id=event.snapshot_id, path=event.path,
                     checkpoint_id=f"{event.kind}-{event.snapshot_id}", causation_id=event.event_id,
                     correlation_id=event.correlation_id)]


def evolve(state: TrainerState, job: TrainJob, checkpoint_dir: str) -> TrainerState:
    """After a job: the new checkpoint is the current model, and its snapshot counts as trained."""
    return replace(state, current_model=checkpoint_dir, trained=state.trained | {job.snapshot_id})
