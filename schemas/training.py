"""Training-side events: dataset snapshots, checkpoints, training feedback, eval reports."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from schemas.envelope import Event, Frozen
from schemas.observations import BlobRef

__all__ = [
    "CheckpointSaved",
    "DatasetSnapshotted",
    "EvalReported",
    "FamilyScores",
    "FeedbackStat",
    "Interval",
    "OffsetRange",
    "RlGroupScored",
    "TrainingFeedbackIssued",
]


class OffsetRange(Frozen):
    """Inclusive offsets of one topic partition that a snapshot was built from."""

    topic: str
    partition: int = Field(ge=0)
    first: int = Field(ge=0)
    last: int = Field(ge=0)


class DatasetSnapshotted(Event):
    """A curator wrote a Parquet training set; the manifest names every source event."""

    type: Literal["dataset.snapshotted"] = "dataset.snapshotted"
    snapshot_id: str
    kind: Literal["sft", "rl", "eval"]
    path: str = Field(description="Directory holding data.parquet and manifest.json.")
    manifest: BlobRef
    rows: int = Field(ge=0)
    source_event_ids_sha256: str = Field(pattern=r"^[0-9a-f]{64}$",
                                         description="sha256 of the sorted source event ids.")
    source_offsets: list[OffsetRange] = Field(default_factory=list)
    family_counts: dict[str, int] = Field(default_factory=dict)
    composition: dict[str, int] = Field(default_factory=dict,
                                        description="Rows per 'family/template/tier' slice.")
    counts: dict[str, int] = Field(default_factory=dict, description="Episodes seen, admitted, "
                                   "and dropped by reason (duplicate, environment fault, …).")
    files: dict[str, str] = Field(default_factory=dict, description="sha256 of each file written.")
    admission_policy: str = Field(default="", description="Who admitted the rows (the human "
                                  "gate, or the automatic stand-in).")


class CheckpointSaved(Event):
    type: Literal["checkpoint.saved"] = "checkpoint.saved"
    checkpoint_id: str
    run_id: str
    stage: Literal["sft", "rl"]
    step: int = Field(ge=0)
    base_model: str
    snapshot_id: str
    weights: BlobRef
    metrics: dict[str, float] = Field(default_factory=dict)
    parent_checkpoint_id: str | None = Field(
        default=None, description="The checkpoint this one was trained from (None: from a base model).")
    snapshot_sha256: str | None = Field(
        default=None, description="sha256 of the snapshot's data.parquet as training read it (an audit "
                                  "from the topics alone checks a rebuilt snapshot against it).")


class FeedbackStat(Frozen):
    """How training went on one family, template or tier: what the generator steers by."""

    scope: Literal["family", "template", "tier"]
    key: str
    episodes: int = Field(ge=0)
    success: float = Field(ge=0.0, le=1.0)
    loss: float | None = Field(default=None, description="Mean SFT loss on its rows, when SFT ran.")
    mean_output_tokens: float = Field(default=0.0, ge=0.0)
    mean_tool_calls: float = Field(default=0.0, ge=0.0)


class TrainingFeedbackIssued(Event):
    """What the trainer wants more (or less) of: sampling weights per family and template."""

    type: Literal["training.feedback_issued"] = "training.feedback_issued"
    run_id: str
    family_weights: dict[str, float] = Field(default_factory=dict)
    template_weights: dict[str, float] = Field(default_factory=dict)
    weak_templates: list[str] = Field(default_factory=list)
    note: str = ""
    stats: list[FeedbackStat] = Field(default_factory=list,
                                      description="Loss, success, tokens and tool calls per family/template/tier.")


class RlGroupScored(Event):
    """One GRPO group of G rollouts of one task, as CARE scored it (RL data is audited like the rest)."""

    type: Literal["rl.group_scored"] = "rl.group_scored"
    run_id: str
    step: int = Field(ge=0)
    task_id: str
    template: str
    family: str
    regime: Literal["progress", "learning", "efficiency", "grpo"]
    success_rate: float = Field(ge=0.0, le=1.0)
    success: list[float] = Field(default_factory=list)
    progress: list[float] = Field(default_factory=list)
    rewards: list[float] = Field(default_factory=list)
    advantages: list[float] = Field(default_factory=list)
    output_tokens: list[int] = Field(default_factory=list)
    tool_calls: list[int] = Field(default_factory=list)


class FamilyScores(Frozen):
    tool: float = Field(ge=0.0, le=1.0)
    memory: float = Field(ge=0.0, le=1.0)
    skills: float = Field(ge=0.0, le=1.0)
    subagent: float = Field(ge=0.0, le=1.0)

    @property
    def overall(self) -> float:
        """MobilePA-Bench's weighting: 0.5·tool + 0.2·memory + 0.2·skills + 0.1·sub-agent."""
        return 0.5 * self.tool + 0.2 * self.memory + 0.2 * self.skills + 0.1 * self.subagent


class Interval(Frozen):
    """A 95% bootstrap interval."""

    low: float
    high: float


class EvalReported(Event):
    type: Literal["eval.reported"] = "eval.reported"
    subject: Literal["checkpoint", "harness"]
    subject_id: str
    split: Literal["train", "dev", "test"]
    episodes: int = Field(ge=0)
    scores: FamilyScores
    overall: float = Field(ge=0.0, le=1.0)
    template_scores: dict[str, float] = Field(default_factory=dict)
    tier_scores: dict[str, float] = Field(default_factory=dict)
    success: float | None = Field(default=None, ge=0.0, le=1.0, description="Share of fully solved episodes.")
    mean_output_tokens: float | None = Field(default=None, ge=0.0)
    mean_tool_calls: float | None = Field(default=None, ge=0.0)
    validity: float | None = Field(default=None, ge=0.0, le=1.0, description="Share of valid model answers.")
    intervals: dict[str, Interval] = Field(default_factory=dict,
                                           description="95% bootstrap intervals: overall, success, family names.")
    harness: str | None = Field(default=None, description="The harness version the episodes ran in.")
    general_perplexity: float | None = Field(default=None, ge=0.0, allow_inf_nan=False, description=(
        "Perplexity on the bundled general-text sample (trainer.general): what training costs outside the phone."))
    general_tool_use: float | None = Field(default=None, ge=0.0, le=1.0, description=(
        "Share of the bundled non-mobile JSON tool requests answered with the right call."))
