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


def _absent(value: object) -> bool:
    return value is None


def _off(value: object) -> bool:
    return value is False


def _on(value: object) -> bool:
    return value is True


class UIElement(Frozen):
    """One node of the screen's accessibility tree, with AndroidWorld's UIElement fields.

    A field at its default is left out when the element is written (a screen is most of an
    episode's bytes, and most of its flags are off); reading fills it back in, so the element
    round-trips unchanged."""

    text: str | None = Field(default=None, exclude_if=_absent)
    content_description: str | None = Field(default=None, exclude_if=_absent)
    class_name: str | None = Field(default=None, exclude_if=_absent)
    resource_id: str | None = Field(default=None, exclude_if=_absent)
    package_name: str | None = Field(default=None, exclude_if=_absent)
    hint_text: str | None = Field(default=None, exclude_if=_absent)
    bounds: Bounds | None = Field(default=None, exclude_if=_absent)
    is_checkable: bool = Field(default=False, exclude_if=_off)
    is_checked: bool = Field(default=False, exclude_if=_off)
    is_clickable: bool = Field(default=False, exclude_if=_off)
    is_editable: bool = Field(default=False, exclude_if=_off)
    is_enabled: bool = Field(default=True, exclude_if=_on)
    is_focusable: bool = Field(default=False, exclude_if=_off)
    is_focused: bool = Field(default=False, exclude_if=_off)
    is_long_clickable: bool = Field(default=False, exclude_if=_off)
    is_scrollable: bool = Field(default=False, exclude_if=_off)
    is_selected: bool = Field(default=False, exclude_if=_off)
    is_visible: bool = Field(default=True, exclude_if=_on)


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
