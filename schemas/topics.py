"""The topic registry: every topic's name, key, partitions, cleanup policy and event types."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from schemas.envelope import Event
from schemas.episodes import (
    ActionRequested,
    DeviceFailed,
    EpisodeEnded,
    EpisodeStarted,
    ObservationRecorded,
)
from schemas.harness import (
    HarnessEvaluated,
    HarnessPromoted,
    HarnessProposed,
    HarnessRejected,
    HarnessVetoed,
)
from schemas.reviews import ReviewDecided, ReviewRequested, ReviewStatsReported
from schemas.tasks import MixShifted, TaskProposed
from schemas.training import (
    CheckpointSaved,
    DatasetSnapshotted,
    EvalReported,
    RlGroupScored,
    TrainingFeedbackIssued,
)
from schemas.verdicts import FailureTraced, VerdictIssued

__all__ = ["DLQ_SUFFIX", "TOPICS", "Topic", "dlq_name", "topic"]

#: Dead letters of topic T go to T + this suffix.
DLQ_SUFFIX = ".dlq"


def dlq_name(name: str) -> str:
    return name + DLQ_SUFFIX


@dataclass(frozen=True)
class Topic:
    """One Kafka topic of the loop and the tagged union of events it carries."""

    name: str
    key: str  # event field whose value is the message key (partitioning + compaction)
    partitions: int
    cleanup_policy: Literal["delete", "compact"]
    event_types: tuple[type[Event], ...]
    description: str

    # Cached: producers and consumers ask on every record. (cached_property writes the
    # instance __dict__ directly, so it works on a frozen dataclass.)
    @cached_property
    def models(self) -> dict[str, type[Event]]:
        """The model of each event type this topic carries, by type name."""
        return {model.event_type(): model for model in self.event_types}

    @cached_property
    def type_names(self) -> frozenset[str]:
        return frozenset(self.models)

    @property
    def dlq(self) -> str:
        return dlq_name(self.name)

    def key_of(self, event: Event) -> bytes:
        """The message key for `event` on this topic."""
        return str(getattr(event, self.key)).encode()

    def renamed(self, name: str) -> Topic:
        """The same topic under another name (tests use a fresh random name each)."""
        return dataclasses.replace(self, name=name)


# Partition counts: 6 for per-device and per-episode streams so six device runners or
# rollout workers can share a consumer group; 3 elsewhere (the docker-compose cluster
# has 3 brokers); 1 for low-volume control topics whose order matters.
TOPICS: dict[str, Topic] = {t.name: t for t in (
    Topic("flywheel.tasks", "task_id", 3, "delete", (TaskProposed,),
          "Task instances proposed by the generator."),
    Topic("flywheel.mix", "generator_id", 1, "delete", (MixShifted,),
          "The generator's target-mix shifts, each with the feedback that caused it."),
    Topic("flywheel.actions", "device_id", 6, "delete", (ActionRequested,),
          "Actions for device runners, keyed by device so one member owns a device."),
    Topic("flywheel.observations", "episode_id", 6, "delete", (ObservationRecorded, DeviceFailed),
          "What devices report back after each action, and device failures."),
    Topic("flywheel.episodes", "episode_id", 6, "delete", (EpisodeStarted, EpisodeEnded),
          "Episode lifecycle with whole trajectories."),
    Topic("flywheel.verdicts", "episode_id", 3, "delete", (VerdictIssued,),
          "Checker scores read from device state."),
    Topic("flywheel.failures", "episode_id", 3, "delete", (FailureTraced,),
          "Structured failure traces for the curator and the harness evolver."),
    Topic("flywheel.reviews", "review_id", 1, "delete",
          (ReviewRequested, ReviewDecided, ReviewStatsReported),
          "The human review gate: requests, signed decisions and reviewer stats."),
    Topic("flywheel.datasets", "snapshot_id", 1, "compact", (DatasetSnapshotted,),
          "Parquet training-set snapshots and their manifests."),
    Topic("flywheel.checkpoints", "checkpoint_id", 1, "compact", (CheckpointSaved,),
          "Model checkpoints from the trainer."),
    Topic("flywheel.feedback", "run_id", 1, "delete", (TrainingFeedbackIssued, RlGroupScored),
          "Training feedback that steers task generation, and GRPO groups as CARE scored them."),
    Topic("flywheel.evals", "subject_id", 1, "delete", (EvalReported,),
          "Evaluation reports for checkpoints and harness versions."),
    Topic("flywheel.harness", "proposal_id", 1, "delete",
          (HarnessProposed, HarnessEvaluated, HarnessPromoted, HarnessRejected, HarnessVetoed),
          "Harness proposals, their evaluations, promotions, rejections and vetoes."),
)}


def topic(name: str) -> Topic:
    """The registered topic called `name`, with a clear error if there is none."""
    try:
        return TOPICS[name]
    except KeyError:
        raise KeyError(f"no topic named {name!r}; known: {', '.join(sorted(TOPICS))}") from None
