"""Tool specs, the tool registry, typed tool failures and a small fast JSON-Schema argument checker.

Each tool's `parameters` is a JSON-Schema object. It is compiled once, at
registration, into plain Python checks (types, enums, ranges, lengths, patterns,
required and unknown names), so validating a call costs a few microseconds
rather than a full jsonschema run.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from schemas.observations import ToolError, ToolResult

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
    "any_value",
    "array",
    "boolean",
    "compile_validator",
    "integer",
    "number",
    "obj",
    "string",
    "tool",
    "tool_error",
    "tool_ok",
]

logger = logging.getLogger(__name__)

Checker = Callable[[dict[str, Any]], dict[str, Any]]
Handler = Callable[[Any, dict[str, Any]], Any]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What an agent (or a task author) sees of a tool."""

    name: str
    app: str
    description: str
    parameters: dict[str, Any]
    returns: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "app": self.app, "description": self.description,
                "parameters": self.parameters, "returns": self.returns}


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


@dataclass(frozen=True, slots=True)
class RegisteredTool:
    spec: ToolSpec
    handler: Handler
    check: Checker


REGISTRY: dict[str, RegisteredTool] = {}


# ---- schema helpers ------------------------------------------------------------------------

def string(description: str, **kw: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **kw}


def integer(description: str, **kw: Any) -> dict[str, Any]:
    return {"type": "integer", "description": description, **kw}


def number(description: str, **kw: Any) -> dict[str, Any]:
    return {"type": "number", "description": description, **kw}


def boolean(description: str, **kw: Any) -> dict[str, Any]:
    return {"type": "boolean", "description": description, **kw}


def array(items: dict[str, Any], description: str, **kw: Any) -> dict[str, Any]:
    return {"type": "array", "items": items, "description": description, **kw}


def any_value(description: str) -> dict[str, Any]:
    return {"description": description}


def obj(required: dict[str, Any] | None = None, optional: dict[str, Any] | None = None,
        ) -> dict[str, Any]:
    """A JSON-Schema object with the given required and optional properties, nothing else."""
    props = {**(required or {}), **(optional or {})}
    return {"type": "object", "properties": props, "required": list(required or {}),
            "additionalProperties": False}


# ---- compiled validation -----------------------------------------------------------------------

_TYPE_NAMES = {"string": "a string", "integer": "an integer", "number": "a number",
               "boolean": "true or false", "array": "a list", "object": "an object"}


def _type_ok(kind: str, value: Any) -> bool:
    t = type(value)
    if kind == "string":
        return t is str
    if kind == "integer":
        return t is int or (t is float and value.is_integer())
    if kind == "number":
        return t is int or t is float
    if kind == "boolean":
        return t is bool
    if kind == "array":
        return t is list
    if kind == "object":
        return t is dict
    return True


def _compile_value(schema: dict[str, Any], label: str) -> Callable[[Any], Any]:
    """A function that checks one value against `schema` and returns it (ints normalised)."""
    kind = schema.get("type")
    enum = schema.get("enum")
    lo, hi = schema.get("minimum"), schema.get("maximum")
    min_len, max_len = schema.get("minLength"), schema.get("maxLength")
    min_items = schema.get("minItems")
    pattern = re.compile(schema["pattern"]) if "pattern" in schema else None
    fmt = schema.get("description", schema.get("pattern", "")).rstrip(".")
    items = _compile_value(schema["items"], f"{label} item") if "items" in schema else None
    nested = compile_validator(schema, label) if kind == "object" and "properties" in schema else None

    def check(value: Any) -> Any:
        if kind is not None and not _type_ok(kind, value):
            raise BadArguments(f"Argument '{label}' must be {_TYPE_NAMES[kind]}.")
        if kind == "integer" and type(value) is float:
            value = int(value)
        if enum is not None and value not in enum:
            raise BadArguments(
                f"Argument '{label}' must be one of {', '.join(map(str, enum))}, not {value!r}.")
        if lo is not None and value < lo:
            raise BadArguments(f"Argument '{label}' must be at least {lo}.")
        if hi is not None and value > hi:
            raise BadArguments(f"Argument '{label}' must be at most {hi}.")
        if min_len is not None and len(value) < min_len:
            raise BadArguments(f"Argument '{label}' must not be empty." if min_len == 1
                               else f"Argument '{label}' must have at least {min_len} characters.")
        if max_len is not None and len(value) > max_len:
            raise BadArguments(f"Argument '{label}' must have at most {max_len} characters.")
        if pattern is not None and not pattern.fullmatch(value):
            raise BadArguments(
                f"Argument '{label}' does not match the expected format ({fmt}): {value!r}.")
        if min_items is not None and len(value) < min_items:
            raise BadArguments(f"Argument '{label}' must list at least {min_items} item(s).")
        if items is not None:
            value = [items(v) for v in value]
        if nested is not None:
            value = nested(value)
        return value

    return check


def compile_validator(schema: dict[str, Any], label: str = "") -> Checker:
    """Compiles an object schema into `check(arguments) -> arguments` raising BadArguments."""
    props = schema.get("properties", {})
    required = tuple(schema.get("required", ()))
    closed = schema.get("additionalProperties", True) is False
    prefix = f"{label}." if label else ""
    checks = {name: _compile_value(sub, f"{prefix}{name}") for name, sub in props.items()}
    expected = ", ".join(props) or "none"

    def check(arguments: dict[str, Any]) -> dict[str, Any]:
        for name in required:
            if name not in arguments:
                raise BadArguments(f"Argument '{prefix}{name}' is required.")
        out = {}
        for name, value in arguments.items():
            fn = checks.get(name)
            if fn is None:
                if closed:
                    raise BadArguments(
                        f"Argument '{prefix}{name}' is not accepted; expected: {expected}.")
                out[name] = value
                continue
            if value is None and name not in required:
                continue
            out[name] = fn(value)
        return out

    return check


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
