"""Harness co-evolution events: proposals to change memory, skills, tools or sub-agents."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, JsonValue

from schemas.envelope import Event, Frozen

__all__ = ["HarnessChange", "HarnessEvaluated", "HarnessPromoted", "HarnessProposed"]


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


class HarnessPromoted(Event):
    type: Literal["harness.promoted"] = "harness.promoted"
    proposal_id: str
    harness: str = Field(description="The new harness version now used by rollouts.")
    previous: str
