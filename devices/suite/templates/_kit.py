"""Shared oracle-step helpers for the templates: a tool call, a finish, and the value of the
last tool result."""

from __future__ import annotations

from typing import Any

from schemas.actions import Finish, ToolCall
from schemas.observations import Observation

__all__ = ["call", "finish", "result_value"]


def call(tool: str, /, **arguments: Any) -> ToolCall:
    """A tool call action (positional-only tool name, so `name=` can be a tool argument)."""
    return ToolCall(name=tool, arguments=arguments)


def finish(answer: Any = None) -> Finish:
    return Finish(answer=answer)


def result_value(observation: Observation) -> Any:
    """The value of the last tool result (None when the last action failed or had none)."""
    result = observation.result
    if result is None or not result.ok:
        return None
    return result.value
