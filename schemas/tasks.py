"""Task events: a generator proposes concrete task instances from the suite's templates."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, JsonValue

from schemas.envelope import Event

__all__ = ["Family", "MixShifted", "Origin", "Split", "TaskProposed", "Tier"]

Family = Literal["tool", "memory", "skills", "subagent"]
Split = Literal["train", "dev", "test"]
Tier = Literal["easy", "medium", "hard"]
#: How the generator made a task: a template instance, two templates composed, or a rephrasing.
Origin = Literal["template", "composed", "rephrased"]


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
    tier: Tier = Field(default="easy", description="Difficulty tier (oracle actions, lookups).")
    origin: Origin = "template"
    parents: list[str] = Field(default_factory=list,
                               description="Templates a constructed task was built from.")
    instance: dict[str, JsonValue] | None = Field(
        default=None, description="The whole TaskInstance as JSON, so a rollout needs no "
                                  "registry look-up (required for constructed tasks).")


class MixShifted(Event):
    """The generator moved its target mix over family x template x tier, and says why."""

    type: Literal["mix.shifted"] = "mix.shifted"
    generator_id: str = Field(min_length=1)
    reason: str = Field(min_length=1, description="What feedback moved the mix, in a sentence.")
    weights: dict[str, float] = Field(description="New target share per slice key "
                                                  "'family/template/tier' (sums to 1).")
    previous: dict[str, float] = Field(default_factory=dict)
    weak_slices: list[str] = Field(default_factory=list)
