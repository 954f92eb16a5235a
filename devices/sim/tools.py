"""The simulator's tool registry: every app module registers its handlers with `@tool`.

The spec and argument-check side lives in the shared kit: `ToolSpec` (devices.kit.specs) and the
typed failures and result builders (devices.kit.errors), which stay importable from here, and the
JSON-Schema builders and compiled checker (devices.kit.validators), which the apps import from
there. Each tool's `parameters` is compiled once, at registration, into plain Python checks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from devices.kit.errors import (
    BadArguments,
    Conflict,
    NotFound,
    PermissionDenied,
    ToolFailure,
    Unsupported,
    tool_error,
    tool_ok,
)
from devices.kit.specs import ToolSpec
from devices.kit.validators import Checker, compile_validator, obj

__all__ = [
    "REGISTRY",
    "BadArguments",
    "Conflict",
    "NotFound",
    "PermissionDenied",
    "RegisteredTool",
    "ToolFailure",
    "ToolSpec",
    "Unsupported",
    "tool",
    "tool_error",
    "tool_ok",
]

logger = logging.getLogger(__name__)

Handler = Callable[[Any, dict[str, Any]], Any]


@dataclass(frozen=True, slots=True)
class RegisteredTool:
    spec: ToolSpec
    handler: Handler
    check: Checker


REGISTRY: dict[str, RegisteredTool] = {}


def tool(name: str, description: str, returns: str, required: dict[str, Any] | None = None,
         optional: dict[str, Any] | None = None) -> Callable[[Handler], Handler]:
    """Registers `handler(state, arguments)` as the tool `name` ("<app>.<verb>")."""
    app = name.split(".", 1)[0]
    parameters = obj(required, optional)

    def register(handler: Handler) -> Handler:
        if name in REGISTRY:
            raise ValueError(f"tool '{name}' is registered twice")
        spec = ToolSpec(name=name, app=app, description=description, parameters=parameters,
                        returns=returns)
        REGISTRY[name] = RegisteredTool(spec, handler, compile_validator(parameters))
        return handler

    return register
