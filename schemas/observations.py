"""What a device returns after an action: the screen as UI elements, tool results, errors."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, JsonValue

from schemas.envelope import Frozen

__all__ = ["BlobRef", "Bounds", "Observation", "ToolError", "ToolResult", "UIElement"]


class BlobRef(Frozen):
    """A large payload (screenshot, UI dump, checkpoint) kept in the content-addressed store."""

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: int = Field(ge=0)
    media_type: str = "application/octet-stream"


class Bounds(Frozen):
    """A screen rectangle in pixels, left/top inclusive, right/bottom exclusive."""

    left: int
    top: int
    right: int
    bottom: int

    @property
    def center(self) -> tuple[int, int]:
        return ((self.left + self.right) // 2, (self.top + self.bottom) // 2)

    def contains(self, x: int, y: int) -> bool:
        return self.left <= x < self.right and self.top <= y < self.bottom


class UIElement(Frozen):
    """One node of the screen's accessibility tree, with AndroidWorld's UIElement fields."""

    text: str | None = None
    content_description: str | None = None
    class_name: str | None = None
    resource_id: str | None = None
    package_name: str | None = None
    hint_text: str | None = None
    bounds: Bounds | None = None
    is_checkable: bool = False
    is_checked: bool = False
    is_clickable: bool = False
    is_editable: bool = False
    is_enabled: bool = True
    is_focusable: bool = False
    is_focused: bool = False
    is_long_clickable: bool = False
    is_scrollable: bool = False
    is_selected: bool = False
    is_visible: bool = True


class ToolError(Frozen):
    """A typed tool failure: `code` is machine-readable, `message` is one sentence for people."""

    code: Literal[
        "unknown_tool", "bad_arguments", "not_found", "conflict", "permission_denied",
        "timeout", "transient", "app_crashed", "device_lost", "unsupported", "command_failed",
    ]
    message: str
    retryable: bool = False


class ToolResult(Frozen):
    """The outcome of one tool call (or planner action): a JSON value or a typed error."""

    name: str
    ok: bool
    value: JsonValue = None
    error: ToolError | None = None


class Observation(Frozen):
    """The device's state after a step, as the agent sees it."""

    step: int = Field(ge=0, description="Steps taken so far in this episode.")
    clock_ms: int = Field(ge=0, description="The device clock, ms since the epoch.")
    foreground_app: str | None = None
    screen: list[UIElement] = Field(default_factory=list)
    screenshot: BlobRef | None = None
    result: ToolResult | None = Field(default=None, description="Result of the last action, if any.")
    message: str | None = Field(default=None, description="Text for the agent (dialogs, replies).")
    done: bool = Field(default=False, description="The episode has ended on the device side.")
