"""The admission policy: which items a person must see, and which the policy may admit.

Pure and configurable (env prefix FLYWHEEL_GATE_POLICY_). The curator calls `route` for
every candidate example and either admits it (recording that the policy did) or publishes a
`review.requested` carrying the route's reasons; nothing waits on a person in between.
Random choices (the audit sample, double review) hash the item id with a seed, so the same
item gets the same route on every replay and restart.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings

from schemas.reviews import ReviewReason
from schemas.settings import load_settings, settings_config
from schemas.verdicts import CheckerKind

__all__ = [
    "DEFAULT_AUDIT_RATE",
    "DEFAULT_DOUBLE_REVIEW_RATE",
    "AdmissionPolicy",
    "Candidate",
    "PolicySettings",
    "PolicyState",
    "Route",
    "evolve",
    "load_policy_settings",
    "route",
    "sample_fraction",
]

logger = logging.getLogger(__name__)

#: 5 % of auto-admissible items still go to a person: enough to catch a checker that drifts
#: (a 5 % audit of 500 examples reviews 25) without making the person the bottleneck.
DEFAULT_AUDIT_RATE = 0.05
#: One item in ten is decided by two reviewers, enough pairs for Cohen's kappa after a day.
DEFAULT_DOUBLE_REVIEW_RATE = 0.10
#: A template is "new" until this many of its items were admitted: its checker has not been
#: audited yet, so a person looks first.
DEFAULT_NEW_TEMPLATE_THRESHOLD = 5
#: All of the suite's checkers are programs that read device state: deterministic.
DETERMINISTIC_CHECKERS: tuple[str, ...] = (
    "tool_call", "final_state", "state_and_answer", "skill", "collaboration")


class PolicySettings(BaseSettings):
    """What the admission policy admits by itself and what it sends to a person."""

    model_config = settings_config("FLYWHEEL_GATE_POLICY_")

    auto_admit: bool = Field(
        default=True, description="Admit verified successes of deterministic checkers without a "
                                  "person (minus the audit sample); false sends everything to one.")
    audit_rate: float = Field(
        default=DEFAULT_AUDIT_RATE, ge=0.0, le=1.0,
        description="Fraction of auto-admissible items sent to a person anyway.")
    double_review_rate: float = Field(
        default=DEFAULT_DOUBLE_REVIEW_RATE, ge=0.0, le=1.0,
        description="Fraction of items a person sees that a second reviewer also decides.")
    new_template_threshold: int = Field(
        default=DEFAULT_NEW_TEMPLATE_THRESHOLD, ge=0,
        description="Admitted items a template needs before its successes are auto-admitted.")
    deterministic_checkers: tuple[CheckerKind, ...] = Field(
        default=DETERMINISTIC_CHECKERS,  # type: ignore[arg-type]
        description="Checker kinds whose verdict is trusted without a person.")
    seed: str = Field(default="flywheel", min_length=1,
                      description="Salts the audit and double-review sampling.")


def load_policy_settings(**overrides: object) -> PolicySettings:
    return load_settings(PolicySettings, "gate policy", **overrides)


@dataclass(frozen=True)
class Candidate:
    """What the curator knows about one example when it decides how to admit it."""

    item_id: str
    template: str
    score: float
    checker: str
    environment: Literal["sim", "model", "device"] = "sim"
    correction: bool = False
    composed: bool = False
    environment_fault: bool = False


@dataclass(frozen=True)
class Route:
    """`admit` is 'auto' (the policy admits), 'person' (a review is requested) or 'drop'."""

    admit: Literal["auto", "person", "drop"]
    reasons: tuple[ReviewReason, ...] = ()
    double_review: bool = False


@dataclass(frozen=True)
class PolicyState:
    """What the policy remembers: admitted items per template (for 'new template')."""

    admitted: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))


def sample_fraction(seed: str, salt: str, item_id: str) -> float:
    """A stable pseudo-random number in [0, 1) for `item_id` (sha256, first 64 bits)."""
    digest = hashlib.sha256(f"{seed}\x00{salt}\x00{item_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def route(settings: PolicySettings, state: PolicyState, item: Candidate) -> Route:
    """Where `item` goes. Environment faults are dropped (they are not the policy's doing);
    uncertain items (partial or failed scores, model-judged checks, corrections, composed
    tasks, new templates) and the audit sample go to a person; the rest is auto-admitted."""
    if item.environment_fault:
        return Route("drop", ("environment_fault",))
    reasons: list[ReviewReason] = []
    if item.score <= 0.0:
        reasons.append("failed")
    elif item.score < 1.0:
        reasons.append("partial_score")
    if item.checker not in settings.deterministic_checkers or item.environment == "model":
        reasons.append("unverified")
    if item.correction:
        reasons.append("correction")
    if item.composed:
        reasons.append("composed")
    if state.admitted.get(item.template, 0) < settings.new_template_threshold:
        reasons.append("new_template")
    if not reasons and not settings.auto_admit:
        reasons.append("policy")
    if not reasons and sample_fraction(settings.seed, "audit", item.item_id) < settings.audit_rate:
        reasons.append("audit")
    if not reasons:
        return Route("auto")
    double = sample_fraction(settings.seed, "double", item.item_id) < settings.double_review_rate
    return Route("person", tuple(reasons), double)


def evolve(state: PolicyState, template: str) -> PolicyState:
    """The state after one more item of `template` was admitted (by the policy or a person)."""
    admitted = dict(state.admitted)
    admitted[template] = admitted.get(template, 0) + 1
    return PolicyState(MappingProxyType(admitted))


class AdmissionPolicy:
    """`route` and `evolve` with the state kept: the curator's one-object view of the policy."""

    def __init__(self, settings: PolicySettings | None = None) -> None:
        self.settings = settings or PolicySettings.model_construct(
            **{name: f.default for name, f in PolicySettings.model_fields.items()})
        self.state = PolicyState()

    def route(self, item: Candidate) -> Route:
        return route(self.settings, self.state, item)

    def admitted(self, template: str) -> None:
        self.state = evolve(self.state, template)
