"""Verifier events: a score read from device state, and structured failure traces."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, JsonValue

from schemas.envelope import Event

__all__ = ["CheckerKind", "FailureTraced", "VerdictIssued", "upcast_verdict_v1"]

CheckerKind = Literal["tool_call", "final_state", "state_and_answer", "skill", "collaboration"]


class VerdictIssued(Event):
    """A checker scored an episode from the device's state (never from the agent's claim).

    v2 replaced v1's bare `passed` flag with a graded `score` in [0, 1]
    (partial credit); `passed` stays, meaning `score == 1`.
    """

    current_version: ClassVar[int] = 2

    type: Literal["verdict.issued"] = "verdict.issued"
    schema_version: int = Field(default=2, ge=1)
    episode_id: str
    task_id: str
    checker: CheckerKind
    score: float = Field(ge=0.0, le=1.0)
    passed: bool
    details: dict[str, JsonValue] = Field(default_factory=dict)


def upcast_verdict_v1(data: dict[str, Any]) -> dict[str, Any]:
    """v1 → v2: derive `score` from v1's boolean `passed` (1.0 or 0.0)."""
    out = dict(data)
    out["score"] = 1.0 if out.get("passed") else 0.0
    out["schema_version"] = 2
    return out


class FailureTraced(Event):
    """Why an episode failed, structured so both the curator and the harness evolver can use it."""

    type: Literal["failure.traced"] = "failure.traced"
    episode_id: str
    task_id: str
    family: Literal["tool", "memory", "skills", "subagent"]
    category: Literal[
        "wrong_tool", "bad_arguments", "wrong_answer", "incomplete", "memory_miss",
        "skill_misroute", "delegation_error", "device_failure", "step_limit", "other",
    ]
    step_index: int | None = Field(default=None, ge=0, description="First step that went wrong.")
    summary: str
    evidence: dict[str, JsonValue] = Field(default_factory=dict)
