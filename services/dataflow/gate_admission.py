"""The gate as the curator's admission policy: the policy admits what needs no person, people
decide the rest, and only decisions the gate signed admit anything.

It has the shape of the curator's `AdmissionPolicy` seam (`name`, `decides_requests`,
`decide_request(request)`, `verify(decision) -> Admission | Rejection`). Plugging it in::

    policy = GateAdmission.for_data_dir(bus.data_dir)   # no gate key yet: people admit nothing
    curator = CuratorService(..., policy=policy)

and where the curator builds a review request, let the policy say why a person must look::

    request = policy.annotate(request, checker=verdict.checker, environment=episode.environment,
                              composed=task.origin == "composed")

A request the policy can admit by itself gets an immediate decision from the reviewer
`POLICY_REVIEWER` (an event on the reviews topic like any other, so every admission can be
traced); everything else waits for a person in the gate, and the loop goes on meanwhile.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

from schemas.reviews import ReviewDecided, ReviewReason, ReviewRequested
from services.dataflow.admission import Admission, Rejection
from services.dataflow.admission_policy import (
    AdmissionPolicy,
    Candidate,
    Route,
    load_policy_settings,
)
from services.dataflow.verify import DecisionVerifier

__all__ = ["POLICY_REVIEWER", "GateAdmission"]

logger = logging.getLogger(__name__)

#: The reviewer name on decisions the admission policy makes by itself.
POLICY_REVIEWER = "gate-policy"
SOURCE = "gate-policy/1"


class GateAdmission:
    """Routes requests with the admission policy and verifies decisions with the gate's key."""

    decides_requests = True

    def __init__(self, verifier: DecisionVerifier, policy: AdmissionPolicy | None = None
                 ) -> None:
        self.verifier = verifier
        self.policy = policy or AdmissionPolicy()
        self._admission = Admission
        self._rejection = Rejection
        self._routes: dict[str, Route] = {}
        self._templates: dict[str, str] = {}
        #: decision id → (review id, episode ids) for the decisions this policy made itself
        self._auto: dict[str, tuple[str, tuple[str, ...]]] = {}
        self._auto_seen: set[str] = set()
        self.auto_admitted = 0
        self.person_admitted = 0

    @classmethod
    def for_data_dir(cls, data_dir: Path, key_path: Path | None = None) -> GateAdmission:
        """The gate of `data_dir` (its public key) and the configured policy
        (FLYWHEEL_GATE_POLICY_*)."""
        return cls(DecisionVerifier.for_data_dir(data_dir, key_path),
                   AdmissionPolicy(load_policy_settings()))

    @property
    def name(self) -> str:
        settings = self.policy.settings
        people = "no gate key: people admit nothing" if self.verifier.closed else \
            "people decide in the gate (Ed25519-signed decisions)"
        return (f"gate policy: verified deterministic successes admitted automatically except a "
                f"{settings.audit_rate:.0%} audit sample; uncertain items to people; {people}")

    # ---- requests ---------------------------------------------------------------------
    def annotate(self, request: ReviewRequested, *, checker: str | None = None,
                 environment: str = "sim", correction: bool = False, composed: bool = False,
                 environment_fault: bool = False) -> ReviewRequested:
        """`request` with the reasons a person must look and whether two must (unchanged
        when the policy admits it by itself). Remembers the route for `decide_request`."""
        route = self._route(request, checker=checker, environment=environment,
                            correction=correction, composed=composed,
                            environment_fault=environment_fault)
        if route.admit == "auto":
            return request
        reasons: list[ReviewReason] = list(dict.fromkeys([*request.reasons, *route.reasons]))
        return ReviewRequested.model_validate({
            **request.model_dump(), "reasons": reasons,
            "double_review": request.double_review or route.double_review})

    def decide_request(self, request: ReviewRequested) -> ReviewDecided | None:
        """The policy's own decision when it needs no person, else None (people decide).
        Either way the review becomes known to the verifier."""
        self.verifier.expect(request)
        if request.template:
            self._templates[request.review_id] = request.template
        route = self._routes.get(request.review_id) or self._route(request)
        if route.admit != "auto" or request.reasons:
            return None
        decision_id = hashlib.sha256(f"gate-policy\x00{request.review_id}".encode()
                                     ).hexdigest()[:32]
        self._auto[decision_id] = (request.review_id, tuple(request.subject_ids))
        rate = self.policy.settings.audit_rate
        return ReviewDecided(
            event_id=decision_id, review_id=request.review_id, decision="approved",
            reviewer=POLICY_REVIEWER, approved_ids=list(request.subject_ids),
            decision_id=decision_id,
            reason=f"admitted by the gate's policy: verified success of a deterministic checker, "
                   f"outside the {rate:.0%} audit sample",
            source=SOURCE, correlation_id=request.correlation_id, causation_id=request.event_id)

    def _route(self, request: ReviewRequested, *, checker: str | None = None,
               environment: str = "sim", correction: bool = False, composed: bool = False,
               environment_fault: bool = False) -> Route:
        reasons = set(request.reasons)
        candidate = Candidate(
            item_id=request.review_id, template=request.template or "",
            score=request.score if request.score is not None else 0.0,
            checker=checker or ("unverified" if "unverified" in reasons else "final_state"),
            environment=environment,  # type: ignore[arg-type]
            correction=correction or "correction" in reasons or request.submitted_by is not None,
            composed=composed or "composed" in reasons,
            environment_fault=environment_fault or "environment_fault" in reasons)
        route = self.policy.route(candidate)
        self._routes[request.review_id] = route
        return route

    # ---- decisions --------------------------------------------------------------------
    def verify(self, decision: ReviewDecided) -> Any:
        """Admission when the decision admits its episodes, else Rejection with the reason."""
        if decision.reviewer == POLICY_REVIEWER:
            return self._verify_own(decision)
        result = self.verifier.verify(decision)
        if result.admits:
            self._admitted(decision.review_id)
            self.person_admitted += 1
            return self._admission(decision.review_id, decision.event_id, result.admitted_ids)
        reason = result.reason or (
            "first opinion of a double review: a second reviewer decides"
            if not decision.final else f"{decision.decision} by {decision.reviewer}: "
                                       f"{decision.reason or 'no reason given'}")
        return self._rejection(decision.review_id, decision.event_id, reason)

    def _verify_own(self, decision: ReviewDecided) -> Any:
        made = self._auto.get(decision.decision_id or "")
        if made is None or made[0] != decision.review_id or decision.decision != "approved":
            self.verifier.rejected["forged_policy_decision"] += 1
            return self._rejection(decision.review_id, decision.event_id,
                                   "forged_policy_decision")
        if decision.decision_id in self._auto_seen:
            self.verifier.rejected["replay"] += 1
            return self._rejection(decision.review_id, decision.event_id, "replay")
        self._auto_seen.add(decision.decision_id)  # type: ignore[arg-type]
        self._admitted(decision.review_id)
        self.auto_admitted += 1
        return self._admission(decision.review_id, decision.event_id, made[1])

    def _admitted(self, review_id: str) -> None:
        template = self._templates.get(review_id)
        if template:
            self.policy.admitted(template)
