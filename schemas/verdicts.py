"""Verifier events: a score read from device state, and structured failure traces."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, JsonValue

from schemas.envelope import Event

__all__ = [
    "ENVIRONMENT_CATEGORIES",
    "FAILURE_CATEGORIES",
    "CheckerKind",
    "FailureCategory",
    "FailureTraced",
    "VerdictIssued",
    "upcast_verdict_v1",
]

CheckerKind = Literal["tool_call", "final_state", "state_and_answer", "skill", "collaboration"]

#: The failure taxonomy. The first ten are the original categories (kept so archived traces
#: still validate); the rest are what the verifier assigns today, one per kind of first
#: wrong step. `environment_fault` is not the policy's doing and is kept apart downstream.
FailureCategory = Literal[
    "wrong_tool", "bad_arguments", "wrong_answer", "incomplete", "memory_miss",
    "skill_misroute", "delegation_error", "device_failure", "step_limit", "other",
    "wrong_arguments", "missed_lookup", "wrong_skill", "bad_delegation", "extra_side_effect",
    "loop", "step_budget", "premature_finish", "environment_fault",
]
FAILURE_CATEGORIES: tuple[str, ...] = FailureCategory.__args__  # type: ignore[attr-defined]
#: Categories that blame the environment (device, sim fault, timeout), not the policy.
ENVIRONMENT_CATEGORIES: frozenset[str] = frozenset({"environment_fault", "device_failure"})


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
    progress: float | None = Field(default=None, ge=0.0, le=1.0,
                                   description="Share of the task's sub-goals met.")
    environment_fault: bool = Field(default=False, description="The episode was spoilt by the "
                                    "environment (device failure, timeout), not the policy.")
    verifier: str = Field(default="", description="Verifier and checker version that scored it.")


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
    category: FailureCategory
    step_index: int | None = Field(default=None, ge=0, description="First step that went wrong.")
    summary: str
    evidence: dict[str, JsonValue] = Field(default_factory=dict)
    environment_fault: bool = Field(default=False, description="Blames the environment, not "
                                    "the policy; such episodes never become training data.")
    event_ids: list[str] = Field(default_factory=list,
                                 description="The events this trace points to (episode, verdict).")
