"""The action space: AndroidWorld-compatible GUI actions plus the planner's own actions.

Every action is a frozen model tagged by `action_type`, so an action serialises to
the same JSON AndroidWorld uses (`{"action_type": "click", "index": 3}`), and the
planner's actions (`tool_call`, `memory_read`, `memory_write`, `use_skill`,
`delegate`, `ask_user`, `finish`) live in the same union.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, JsonValue, TypeAdapter, model_validator

from schemas.envelope import Frozen

__all__ = [
    "ACTION_ADAPTER",
    "GUI_ACTION_TYPES",
    "PLANNER_ACTION_TYPES",
    "Action",
    "Answer",
    "AskUser",
    "Click",
    "Delegate",
    "Finish",
    "InputText",
    "KeyboardEnter",
    "LongPress",
    "MemoryRead",
    "MemoryWrite",
    "NavigateBack",
    "NavigateHome",
    "OpenApp",
    "Scroll",
    "Status",
    "Swipe",
    "ToolCall",
    "UseSkill",
    "Wait",
    "parse_action",
]

Direction = Literal["up", "down", "left", "right"]


class _Targeted(Frozen):
    """An action aimed at a UI element by index, or at a screen point by x/y."""

    index: int | None = Field(default=None, ge=0, description="Index into the observed UI elements.")
    x: int | None = Field(default=None, ge=0, description="Screen x in pixels.")
    y: int | None = Field(default=None, ge=0, description="Screen y in pixels.")

    @model_validator(mode="after")
    def _one_target(self) -> _Targeted:
        has_point = self.x is not None and self.y is not None
        if (self.x is None) != (self.y is None):
            raise ValueError("x and y must be given together")
        if self.index is None and not has_point:
            raise ValueError("give either index or both x and y")
        if self.index is not None and has_point:
            raise ValueError("give index or x/y, not both")
        return self


class Click(_Targeted):
    action_type: Literal["click"] = "click"


class LongPress(_Targeted):
    action_type: Literal["long_press"] = "long_press"


class InputText(Frozen):
    """Types text into the element at `index` (or the focused field when index is None)."""

    action_type: Literal["input_text"] = "input_text"
    text: str
    index: int | None = Field(default=None, ge=0)
    clear: bool = Field(default=True, description="Replace the field's text rather than append.")


class KeyboardEnter(Frozen):
    action_type: Literal["keyboard_enter"] = "keyboard_enter"


class Scroll(Frozen):
    """Scrolls the screen (or the scrollable element at `index`) so content moves `direction`."""

    action_type: Literal["scroll"] = "scroll"
    direction: Direction
    index: int | None = Field(default=None, ge=0)


class Swipe(Frozen):
    action_type: Literal["swipe"] = "swipe"
    direction: Direction


class NavigateHome(Frozen):
    action_type: Literal["navigate_home"] = "navigate_home"


class NavigateBack(Frozen):
    action_type: Literal["navigate_back"] = "navigate_back"


class OpenApp(Frozen):
    action_type: Literal["open_app"] = "open_app"
    app_name: str = Field(min_length=1)


class Wait(Frozen):
    action_type: Literal["wait"] = "wait"
    seconds: float = Field(default=1.0, gt=0, le=60)


class Answer(Frozen):
    """Reports an answer to the user (AndroidWorld's information-retrieval action)."""

    action_type: Literal["answer"] = "answer"
    text: str


class Status(Frozen):
    """AndroidWorld's terminal action: the agent declares the goal complete or infeasible."""

    action_type: Literal["status"] = "status"
    goal_status: Literal["complete", "infeasible"]


class ToolCall(Frozen):
    """Calls a typed tool by name with JSON arguments."""

    action_type: Literal["tool_call"] = "tool_call"
    name: str = Field(min_length=1)
    arguments: dict[str, JsonValue] = Field(default_factory=dict)


class MemoryRead(Frozen):
    """Reads the agent's long-term memory by exact key, or searches it by query."""

    action_type: Literal["memory_read"] = "memory_read"
    key: str | None = None
    query: str | None = None

    @model_validator(mode="after")
    def _key_or_query(self) -> MemoryRead:
        if (self.key is None) == (self.query is None):
            raise ValueError("give exactly one of key or query")
        return self


class MemoryWrite(Frozen):
    action_type: Literal["memory_write"] = "memory_write"
    key: str = Field(min_length=1)
    value: JsonValue


class UseSkill(Frozen):
    """Runs a named, reusable multi-step procedure from the harness's skill library."""

    action_type: Literal["use_skill"] = "use_skill"
    skill: str = Field(min_length=1)
    arguments: dict[str, JsonValue] = Field(default_factory=dict)


class Delegate(Frozen):
    """Hands part of the task to a sub-agent; its result comes back as an observation."""

    action_type: Literal["delegate"] = "delegate"
    agent: str = Field(min_length=1)
    instruction: str = Field(min_length=1)
    arguments: dict[str, JsonValue] = Field(default_factory=dict)


class AskUser(Frozen):
    action_type: Literal["ask_user"] = "ask_user"
    question: str = Field(min_length=1)


class Finish(Frozen):
    """Ends the episode, optionally with a final answer for the user."""

    action_type: Literal["finish"] = "finish"
    answer: JsonValue = None


Action = Annotated[
    Click | LongPress | InputText | KeyboardEnter | Scroll | Swipe | NavigateHome | NavigateBack
    | OpenApp | Wait | Answer | Status | ToolCall | MemoryRead | MemoryWrite | UseSkill
    | Delegate | AskUser | Finish,
    Field(discriminator="action_type"),
]

ACTION_ADAPTER: TypeAdapter[Any] = TypeAdapter(Action)

GUI_ACTION_TYPES = frozenset({
    "click", "long_press", "input_text", "keyboard_enter", "scroll", "swipe", "navigate_home",
    "navigate_back", "open_app", "wait", "answer", "status",
})
PLANNER_ACTION_TYPES = frozenset({
    "tool_call", "memory_read", "memory_write", "use_skill", "delegate", "ask_user", "finish",
})


def parse_action(data: dict[str, Any] | str | bytes) -> Any:
    """Validates AndroidWorld-style JSON (a dict or a JSON string) into an Action model."""
    if isinstance(data, (str, bytes)):
        return ACTION_ADAPTER.validate_json(data)
    return ACTION_ADAPTER.validate_python(data)
