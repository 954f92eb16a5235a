"""Harness co-evolution events: proposals to change memory, skills, tools or sub-agents."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, JsonValue

from schemas.envelope import Event, Frozen

__all__ = [
    "HarnessChange",
    "HarnessEvaluated",
    "HarnessPromoted",
    "HarnessProposed",
    "HarnessRejected",
    "HarnessVetoed",
]


class HarnessChange(Frozen):
    component: Literal["memory", "skill", "tool", "subagent", "prompt"]
    op: Literal["add", "update", "remove"]
    name: str
    spec: dict[str, JsonValue] = Field(default_factory=dict)


class HarnessProposed(Event):
    type: Literal["harness.proposed"] = "harness.proposed"
    proposal_id: str
    base_harness: str
    changes: list[HarnessChange] = Field(min_length=1)
    motivated_by: list[str] = Field(default_factory=list, description="Failure trace event ids.")
    rationale: str = ""


class HarnessEvaluated(Event):
    type: Literal["harness.evaluated"] = "harness.evaluated"
    proposal_id: str
    base_overall: float = Field(ge=0.0, le=1.0)
    candidate_overall: float = Field(ge=0.0, le=1.0)
    episodes: int = Field(ge=0)
    verdict: Literal["better", "same", "worse"]
    split: Literal["dev", "test"] = Field(default="dev", description="Where the pair ran.")
    base_harness: str = Field(default="", description="Version the candidate was compared with.")
    candidate_harness: str = Field(default="", description="Version of base + the proposal.")
    suite_seed: int = Field(default=0, description="Both runs saw the same seeded instances.")
    delta: float = Field(default=0.0, ge=-1.0, le=1.0, description="Paired overall gain.")
    delta_low: float = Field(default=0.0, ge=-1.0, le=1.0, description="Its 95% lower bound.")
    delta_high: float = Field(default=0.0, ge=-1.0, le=1.0, description="Its 95% upper bound.")
    family_deltas: dict[str, float] = Field(default_factory=dict)
    passed: bool = Field(default=False, description="Whether this split's gate let it through.")
    reason: str = Field(default="", description="The gate's one-sentence reason.")


class HarnessPromoted(Event):
    type: Literal["harness.promoted"] = "harness.promoted"
    proposal_id: str
    harness: str = Field(description="The new harness version now used by rollouts.")
    previous: str
    reason: Literal["gate", "rollback"] = Field(
        default="gate", description="Passed the gate, or a person rolled back to this version.")
    motivated_by: list[str] = Field(default_factory=list, description="Failure trace event ids.")
    dev_delta: float | None = Field(default=None, ge=-1.0, le=1.0)
    test_delta: float | None = Field(default=None, ge=-1.0, le=1.0)


class HarnessRejected(Event):
    """A proposal will not be promoted: the gate refused it, it overfit dev, or a person vetoed it."""

    type: Literal["harness.rejected"] = "harness.rejected"
    proposal_id: str
    reason: Literal["no_gain", "family_regression", "overfit", "vetoed", "invalid", "stale"]
    detail: str = Field(description="One sentence a person can act on.")


class HarnessVetoed(Event):
    """A person vetoed a pending promotion on the gate's page (signed with the gate's key)."""

    type: Literal["harness.vetoed"] = "harness.vetoed"
    proposal_id: str
    reviewer: str = Field(min_length=1)
    note: str = ""
    # Signed by the gate like review decisions (None on unsigned vetoes, which the evolver
    # refuses): `services.dataflow.vetoes.veto_payload` gives the bytes the signature covers.
    key_id: str | None = Field(
        default=None, min_length=1, max_length=64,
        description="Which gate key signed it (hex prefix of the public key's sha256).")
    signature: str | None = Field(
        default=None, min_length=1, max_length=256,
        description="Ed25519 signature over the veto's canonical bytes, hex.")
