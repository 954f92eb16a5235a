"""The admission seam between the curator and the human review gate.

The curator asks for review of every candidate episode (`review.requested`) and admits rows
only on a `review.decided` that the admission policy's `verify(decision_event)` accepts:

    verify(decision: ReviewDecided) -> Admission | Rejection

That one function is where the review gate plugs in its signed-decision check
(`services.dataflow.gate_admission.GateAdmission` has this shape). A policy may also offer
`annotate(request, checker=, environment=, correction=, composed=, environment_fault=)`: the
curator then lets it add the reasons a person must look before the request is published.

How the curator calls a (possibly stateful) policy, through `OncePerEvent`: `decide_request`
for every request it publishes and again for every request it reads back or restores (the
policy must treat a repeat as a no-op), and `verify` exactly once per decision event id, in
topic order — the same order again when it rebuilds its state after a restart. Until it
does, `AutoAdmission` stands in: it answers each request at once with a decision from the
reviewer `AUTO_REVIEWER`, and every snapshot's manifest says so (`admission_policy`). A
policy that does not auto-decide (`decides_requests = False`) leaves requests for people.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

from schemas.reviews import ReviewDecided, ReviewRequested
from services.dataflow.ids import derived_id

__all__ = [
    "AUTO_REVIEWER",
    "Admission",
    "AdmissionPolicy",
    "AutoAdmission",
    "OncePerEvent",
    "Rejection",
]

logger = logging.getLogger(__name__)

AUTO_REVIEWER = "auto-admission"


@dataclass(frozen=True)
class Admission:
    """Rows of these episodes may enter training; `decision_id` is the decision's event id."""

    review_id: str
    decision_id: str
    episode_ids: tuple[str, ...]


@dataclass(frozen=True)
class Rejection:
    review_id: str
    decision_id: str
    reason: str


class AdmissionPolicy(Protocol):
    name: str
    decides_requests: bool

    def decide_request(self, request: ReviewRequested) -> ReviewDecided | None:
        """An immediate decision for `request` (automatic policies), or None (people decide)."""
        ...

    def verify(self, decision: ReviewDecided) -> Admission | Rejection:
        """Whether a decision event admits its episodes (the gate checks signatures here)."""
        ...


class AutoAdmission:
    """The stand-in for the human gate: approves every request, and accepts only its own
    decisions (a decision from anyone else is rejected: without the gate nobody can prove
    who they are)."""

    name = "automatic stand-in (no human review: run with --admission gate for people to decide)"
    decides_requests = True

    def decide_request(self, request: ReviewRequested) -> ReviewDecided:
        return ReviewDecided(
            event_id=derived_id("review.decided", request.review_id), review_id=request.review_id,
            decision="approved", reviewer=AUTO_REVIEWER,
            reason="admitted automatically: verified pass, not a duplicate, no environment fault",
            approved_ids=list(request.subject_ids), source="curator/1.0.0",
            correlation_id=request.correlation_id, causation_id=request.event_id)

    def verify(self, decision: ReviewDecided) -> Admission | Rejection:
        if decision.reviewer != AUTO_REVIEWER:
            return Rejection(decision.review_id, decision.event_id,
                             f"reviewer {decision.reviewer!r} is not verifiable without the gate")
        if decision.decision != "approved":
            return Rejection(decision.review_id, decision.event_id, decision.reason or
                             decision.decision)
        return Admission(decision.review_id, decision.event_id, tuple(decision.approved_ids))


class OncePerEvent:
    """Wraps a policy so `verify` runs once per decision event id (later calls get the first
    answer): the curator's fold may look at one decision twice, a stateful verifier must not
    (it would take the second look for a replay)."""

    def __init__(self, policy: AdmissionPolicy) -> None:
        self.policy = policy
        self._verified: dict[str, Admission | Rejection] = {}

    @property
    def name(self) -> str:
        return self.policy.name

    @property
    def decides_requests(self) -> bool:
        return self.policy.decides_requests

    def annotate(self, request: ReviewRequested, **facts: object) -> ReviewRequested:
        annotate = getattr(self.policy, "annotate", None)
        return annotate(request, **facts) if annotate is not None else request

    def decide_request(self, request: ReviewRequested) -> ReviewDecided | None:
        return self.policy.decide_request(request)

    def verify(self, decision: ReviewDecided) -> Admission | Rejection:
        known = self._verified.get(decision.event_id)
        if known is None:
            known = self._verified[decision.event_id] = self.policy.verify(decision)
        return known
