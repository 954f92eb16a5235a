"""Rollout events: actions sent to a device, observations back, and whole episodes."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, JsonValue

from schemas.actions import Action
from schemas.envelope import Event, Frozen
from schemas.observations import BlobRef, Observation

__all__ = [
    "ActionRequested",
    "DeviceFailed",
    "EpisodeEnded",
    "EpisodeStarted",
    "ObservationRecorded",
    "Step",
    "TokenUsage",
]


class TokenUsage(Frozen):
    """Token counts for one policy call; `reasoning` is the thinking part of `completion`."""

    prompt: int = Field(default=0, ge=0)
    completion: int = Field(default=0, ge=0)
    reasoning: int = Field(default=0, ge=0)


class Step(Frozen):
    """One turn of an episode: what the policy did and what the device answered."""

    index: int = Field(ge=0)
    action: Action
    observation: Observation
    thought: str | None = Field(default=None, description="The policy's reasoning text, if kept.")
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    latency_ms: float = Field(default=0.0, ge=0)
    tool_calls: int = Field(default=0, ge=0, description="Tool calls this step made.")


class ActionRequested(Event):
    """The rollout asks a device runner to execute one action (keyed by device_id)."""

    type: Literal["action.requested"] = "action.requested"
    episode_id: str
    device_id: str
    step: int = Field(ge=0)
    action: Action
    task_id: str | None = Field(default=None, description="Set on step 0: the task to reset to.")
    task_params: dict[str, JsonValue] | None = None


class ObservationRecorded(Event):
    """A device runner executed an action and reports what the device shows now."""

    type: Literal["observation.recorded"] = "observation.recorded"
    episode_id: str
    device_id: str
    step: int = Field(ge=0)
    observation: Observation


class DeviceFailed(Event):
    """A device stopped answering (or crashed) mid-episode; the episode ends as failed."""

    type: Literal["device.failed"] = "device.failed"
    episode_id: str
    device_id: str
    step: int = Field(ge=0)
    reason: Literal["disconnected", "timeout", "crashed", "unavailable"]
    message: str


class EpisodeStarted(Event):
    type: Literal["episode.started"] = "episode.started"
    episode_id: str
    task_id: str
    device_id: str
    environment: Literal["sim", "model", "device"]
    policy: str = Field(description="Checkpoint id or scripted policy name.")
    harness: str = Field(default="default", description="Harness version the policy ran in.")


class EpisodeEnded(Event):
    """A whole trajectory, ready for the verifier."""

    type: Literal["episode.ended"] = "episode.ended"
    episode_id: str
    task_id: str
    device_id: str
    environment: Literal["sim", "model", "device"]
    policy: str
    harness: str = "default"
    outcome: Literal["finished", "max_steps", "device_failed", "error", "timeout"]
    steps: list[Step] = Field(default_factory=list)
    final_answer: JsonValue = None
    total_tokens: TokenUsage = Field(default_factory=TokenUsage)
    tool_calls: int = Field(default=0, ge=0)
    final_state: BlobRef | None = Field(default=None, description="The device's final state "
                                        "(JSON) in the blob store; the verifier scores this.")
    failure: str | None = Field(default=None, description="Why the episode ended early, if so.")
