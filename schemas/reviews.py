"""Review-gate events: the curator asks a person to admit data, the person decides."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from schemas.envelope import Event

__all__ = ["ReviewDecided", "ReviewRequested"]


class ReviewRequested(Event):
    type: Literal["review.requested"] = "review.requested"
    review_id: str
    subject: Literal["episode", "batch", "harness"]
    subject_ids: list[str] = Field(min_length=1, description="Episode ids (or proposal id).")
    summary: str
    score: float | None = Field(default=None, ge=0.0, le=1.0)


class ReviewDecided(Event):
    type: Literal["review.decided"] = "review.decided"
    review_id: str
    decision: Literal["approved", "rejected", "needs_changes"]
    reviewer: str = Field(min_length=1)
    reason: str = ""
    approved_ids: list[str] = Field(default_factory=list, description="Subset admitted, if partial.")
