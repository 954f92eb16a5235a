"""Review-gate events: the curator asks a person to admit data, the person decides.

A decision the curator may act on is signed by the gate with Ed25519: `signature` covers
the canonical bytes of the decision (`services.dataflow.signing.signed_payload`), `key_id`
names the gate key that made it and `decision_id` is its nonce (a second sighting is a
replay). Unsigned decisions (the v1 shape, all three fields None) still validate as
events, but a verifying consumer rejects them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from schemas.envelope import Event, Frozen
from schemas.tasks import Family

__all__ = [
    "ReviewDecided",
    "ReviewReason",
    "ReviewRequested",
    "ReviewStatsReported",
    "ReviewerThroughput",
]

#: Why an item goes to a person instead of being admitted by the policy.
ReviewReason = Literal[
    "audit", "partial_score", "correction", "new_template", "composed", "unverified",
    "failed", "environment_fault", "policy",
]


class ReviewRequested(Event):
    type: Literal["review.requested"] = "review.requested"
    review_id: str
    subject: Literal["episode", "batch", "harness"]
    subject_ids: list[str] = Field(min_length=1, description="Episode ids (or proposal id).")
    summary: str
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    # Optional context the gate shows and filters on (older requests carry none of it).
    task_id: str | None = Field(default=None, description="The task the episodes ran.")
    family: Family | None = None
    template: str | None = None
    tier: str | None = Field(default=None, min_length=1, max_length=32,
                             description="Difficulty tier of the task (easy, medium, hard).")
    reasons: list[ReviewReason] = Field(
        default_factory=list, description="Why the admission policy sent it to a person.")
    submitted_by: str | None = Field(
        default=None, min_length=1,
        description="The person who wrote the item (a correction's author); they may not "
                    "approve it.")
    double_review: bool = Field(
        default=False, description="Two different reviewers must decide it.")


class ReviewDecided(Event):
    type: Literal["review.decided"] = "review.decided"
    review_id: str
    decision: Literal["approved", "rejected", "needs_changes"]
    reviewer: str = Field(min_length=1)
    reason: str = ""
    approved_ids: list[str] = Field(default_factory=list, description="Subset admitted, if partial.")
    # Signed decisions (None on unsigned, v1-shaped decisions, which verifiers reject).
    decision_id: str | None = Field(
        default=None, min_length=1, max_length=64,
        description="Nonce of this decision; a second sighting of it is a replay.")
    key_id: str | None = Field(
        default=None, min_length=1, max_length=64,
        description="Which gate key signed it (hex prefix of the public key's sha256).")
    signature: str | None = Field(
        default=None, min_length=1, max_length=256,
        description="Ed25519 signature over the decision's canonical bytes, hex.")
    submitted_by: str | None = Field(
        default=None, min_length=1, description="The item's author, copied from the request.")
    final: bool = Field(
        default=True, description="False for the first opinion of a double review: only a "
                                  "final decision admits anything.")


class ReviewerThroughput(Frozen):
    """One reviewer's decisions within a stats window."""

    reviewer: str = Field(min_length=1)
    decisions: int = Field(ge=0)
    approved: int = Field(ge=0)
    rejected: int = Field(ge=0)
    per_hour: float = Field(ge=0.0, description="Decisions per hour of the reviewer's active time.")
    median_s: float | None = Field(default=None, ge=0.0,
                                   description="Median seconds from opening an item to deciding.")
    gold_decided: int = Field(default=0, ge=0, description="Decisions on seeded gold items.")
    gold_correct: int = Field(default=0, ge=0, description="Of those, the right answers.")


class ReviewStatsReported(Event):
    """The gate's periodic report: inter-reviewer agreement and per-reviewer throughput."""

    type: Literal["review.stats_reported"] = "review.stats_reported"
    decisions: int = Field(ge=0, description="Decisions so far.")
    pairs: int = Field(ge=0, description="Double-reviewed items with both opinions in.")
    kappa: float | None = Field(default=None, ge=-1.0, le=1.0,
                                description="Cohen's kappa over those pairs (None below two).")
    alpha_by_family: dict[str, float | None] = Field(
        default_factory=dict, description="Krippendorff's alpha per family over its double-reviewed "
                                          "items (None where not measurable).")
    waiting: int = Field(ge=0, description="Items still waiting for a person.")
    reviewers: list[ReviewerThroughput] = Field(default_factory=list)

    @property
    def review_id(self) -> str:
        """The reviews topic keys by review_id: every report goes under one key, in order."""
        return "stats"
