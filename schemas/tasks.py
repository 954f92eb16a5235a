"""Task events: a generator proposes concrete task instances from the suite's templates."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, JsonValue

from schemas.envelope import Event

__all__ = ["Family", "Split", "TaskProposed"]

Family = Literal["tool", "memory", "skills", "subagent"]
Split = Literal["train", "dev", "test"]


class TaskProposed(Event):
    """A task instance was generated and is ready to be rolled out."""

    type: Literal["task.proposed"] = "task.proposed"
    task_id: str = Field(min_length=1)
    suite: str = Field(default="mobilepa", description="Suite name the template belongs to.")
    template: str = Field(min_length=1)
    family: Family
    split: Split
    index: int = Field(ge=0, description="Instance index; with the suite seed it fixes the params.")
    params: dict[str, JsonValue] = Field(default_factory=dict)
    goal: str = Field(min_length=1, description="The instruction the agent receives.")
    priority: float = Field(default=1.0, ge=0, description="Sampling weight from training feedback.")
