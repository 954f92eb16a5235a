"""Rollout events: actions sent to a device, observations back, and whole episodes."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    field_serializer,
    model_validator,
)

from schemas.actions import PLANNER_ACTION_TYPES, Action
from schemas.envelope import Event, Frozen
from schemas.observations import BlobRef, Observation, UIElement

__all__ = [
    "ActionRequested",
    "DeviceFailed",
    "EpisodeEnded",
    "EpisodeStarted",
    "ObservationRecorded",
    "Step",
    "TokenUsage",
    "elide_repeated_screens",
    "restore_screens",
    "unseen_screens_dropped",
    "upcast_episode_ended_v1",
    "upcast_observation_v1",
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
    target: bool = Field(default=True, description="False for a step no training row may teach: "
                         "a deliberate slip (the rollout's recovery share) that the phone "
                         "refused; it stays in the history of the rows after it, which show the "
                         "error and the way on.")
    screen_as_step: int | None = Field(
        default=None, ge=0, exclude_if=lambda value: value is None,
        description="On the wire only: the screen is unchanged since step N of this episode, "
        "which carries it; `observation.screen` is then empty. Reading puts the screen back "
        "(and this back to None), so a decoded episode equals the one written.")


class ActionRequested(Event):
    """The rollout asks a device runner to execute one action (keyed by device_id)."""

    type: Literal["action.requested"] = "action.requested"
    episode_id: str
    device_id: str
    step: int = Field(ge=0)
    action: Action
    task_id: str | None = Field(default=None, description="Set on step 0: the task to reset to.")
    task_params: dict[str, JsonValue] | None = None
    request: Literal["act", "observe", "advance", "call_tool", "device_state"] = Field(
        default="act", description="What the runner does: 'act' executes `action` (one device "
        "step); the rest serve a harness running in the rollout: 'observe' only observes "
        "(step 0: a bare reset), 'advance' spends a step with no effect, 'call_tool' runs the "
        "ToolCall in `action` without spending a step, 'device_state' also returns the "
        "device part of the final state. `action` is ignored unless act or call_tool.")

    @model_validator(mode="after")
    def _tool_for_call_tool(self) -> ActionRequested:
        if self.request == "call_tool" and self.action.action_type != "tool_call":
            raise ValueError(f"a call_tool request carries a tool_call action, not "
                             f"{self.action.action_type}")
        return self


class ObservationRecorded(Event):
    """A device runner executed an action and reports what the device shows now.

    v2 added `screen_as_step`: a screen that did not change since an earlier answer of the
    same episode (a tool call leaves the screen as it was: about 9 answers in 10) is not sent
    again; `observation.screen` is then empty and the screen is the one answered at that step.
    """

    current_version: ClassVar[int] = 2

    type: Literal["observation.recorded"] = "observation.recorded"
    schema_version: int = Field(default=2, ge=1)
    episode_id: str
    device_id: str
    step: int = Field(ge=0)
    observation: Observation
    device_state: dict[str, JsonValue] | None = Field(
        default=None, description="The device part of the final state ({tables, settings, "
        "clock_ms}), answering a 'device_state' request; None otherwise.")
    screen_as_step: int | None = Field(
        default=None, ge=0, description="The screen is unchanged since the answer to step N of "
        "this episode, which carried it: `observation.screen` is then empty and stands for "
        "that screen (the reader checks both). None: `observation.screen` is the screen.")


def upcast_observation_v1(data: dict[str, Any]) -> dict[str, Any]:
    """v1 → v2: every v1 answer carried its screen (`screen_as_step` absent means None)."""
    return {**data, "schema_version": 2}


class DeviceFailed(Event):
    """A device stopped answering (or crashed) mid-episode; the episode ends as failed."""

    type: Literal["device.failed"] = "device.failed"
    episode_id: str
    device_id: str
    step: int = Field(ge=0)
    reason: Literal["disconnected", "timeout", "crashed", "unavailable", "reset_failed"]
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
    """A whole trajectory, ready for the verifier.

    v2 writes a step's screen only when it differs from the last screen written (a tool call
    leaves the screen as it was: screens were ~90% of an episode's bytes); a repeated one is
    written empty with `screen_as_step` naming the step that carries it, and reading puts it
    back, so in memory every step has the screen it was recorded with. The rollout records no
    screen that nobody was shown (`unseen_screens_dropped`: the screen behind a tool result,
    unless the next step acts on the screen), so such a step's `observation.screen` is empty.
    """

    current_version: ClassVar[int] = 2

    type: Literal["episode.ended"] = "episode.ended"
    schema_version: int = Field(default=2, ge=1)
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
    context: str | None = Field(default=None, description="What the policy was shown before its "
                                "first step (the context header, devices.harness.context); with "
                                "`steps` it rebuilds every step's prompt without a simulator.")
    context_version: str | None = Field(default=None, description="The rendering of `context`, "
                                        "e.g. context/2; None on episodes recorded before it.")

    @field_serializer("steps", mode="wrap")
    def _steps_without_repeated_screens(self, steps: list[Step], handler: SerializerFunctionWrapHandler) -> Any:
        return handler(elide_repeated_screens(steps))

    @model_validator(mode="after")
    def _screens_back(self) -> EpisodeEnded:
        if any(step.screen_as_step is not None for step in self.steps):
            self.steps[:] = restore_screens(self.steps)  # the model's own list, filled in place
        return self


def elide_repeated_screens(steps: list[Step]) -> list[Step]:
    """`steps` as written: a step whose screen equals the last screen written carries none and
    names the step that does (`screen_as_step`); the others as they are."""
    written: list[Step] = []
    last: Step | None = None  # the last step written with its (non-empty) screen
    for step in steps:
        screen = step.observation.screen
        if last is not None and screen and screen == last.observation.screen:
            step = _without_screen(step, screen_as_step=last.index)
        elif screen:
            last = step
        written.append(step)
    return written


#: Actions a policy takes without looking at the screen: the planner's actions, and the two
#: GUI-set ones that only speak (anything else acts on the screen, or may).
SCREENLESS_ACTIONS = PLANNER_ACTION_TYPES | {"answer", "status"}


def unseen_screens_dropped(steps: list[Step]) -> list[Step]:
    """`steps` without the screens nobody was shown: a step that answered with a tool result
    shows the policy that result, not the screen (`devices.harness.context.render_observation`),
    so its screen is kept only where the next step acts on the screen (the gate shows it as the
    screen that step was chosen on). On an oracle run of the suite these were 42% of an
    episode's bytes. Every screen a policy saw stays."""
    return [_without_screen(step) if step.observation.result is not None and step.observation.screen
            and (following is None or following.action.action_type in SCREENLESS_ACTIONS) else step
            for step, following in zip(steps, [*steps[1:], None])]


def _without_screen(step: Step, **changes: Any) -> Step:
    """`step` with an empty screen (and `changes`). BaseModel.model_copy: both parts were
    validated, so the copy is not marked unvalidated."""
    observation = BaseModel.model_copy(step.observation, update={"screen": []})
    return BaseModel.model_copy(step, update={"observation": observation, **changes})


def restore_screens(steps: list[Step]) -> list[Step]:
    """`steps` as read, every screen back in place; ValueError (one sentence) for a step that
    carries a screen and a reference, or names a step that carries none before it."""
    screens: dict[int, list[UIElement]] = {}
    restored: list[Step] = []
    for position, step in enumerate(steps):
        named = step.screen_as_step
        if named is None:
            if step.observation.screen:
                screens[step.index] = step.observation.screen
            restored.append(step)
            continue
        if step.observation.screen:
            raise ValueError(f"step {position} carries a screen and screen_as_step {named}; "
                             f"send one or the other")
        if named not in screens:
            raise ValueError(f"step {position} names the screen of step {named}, which no "
                             f"earlier step carries")
        # BaseModel.model_copy: both parts were validated, so the copy is not marked unvalidated
        observation = BaseModel.model_copy(step.observation, update={"screen": screens[named]})
        restored.append(BaseModel.model_copy(step, update={"observation": observation, "screen_as_step": None}))
    return restored


def upcast_episode_ended_v1(data: dict[str, Any]) -> dict[str, Any]:
    """v1 → v2: every v1 step carried its screen (`screen_as_step` absent means None)."""
    return {**data, "schema_version": 2}
