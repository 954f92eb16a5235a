"""Typed tool failures and the ToolResult builders every device and the harness use."""

from __future__ import annotations

from typing import Any

from schemas.observations import ToolError, ToolResult

__all__ = [
    "BadArguments",
    "Conflict",
    "NotFound",
    "PermissionDenied",
    "ToolFailure",
    "Unsupported",
    "tool_error",
    "tool_ok",
]


# Results are built without re-validation: every field comes from a tool or the harness (the
# producer re-validates constructed values before they go on the wire).
def tool_ok(name: str, value: Any) -> ToolResult:
    return ToolResult.model_construct(name=name, ok=True, value=value, error=None)


def tool_error(name: str, code: str, message: str, retryable: bool = False) -> ToolResult:
    return ToolResult.model_construct(
        name=name, ok=False, value=None,
        error=ToolError.model_construct(code=code, message=message, retryable=retryable))


class ToolFailure(Exception):
    """A typed tool failure; `code` matches schemas.observations.ToolError.code."""

    code = "unsupported"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadArguments(ToolFailure):
    code = "bad_arguments"


class NotFound(ToolFailure):
    code = "not_found"


class Conflict(ToolFailure):
    code = "conflict"


class PermissionDenied(ToolFailure):
    code = "permission_denied"


class Unsupported(ToolFailure):
    code = "unsupported"
