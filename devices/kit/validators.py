"""JSON-Schema builders for tool arguments and a small fast argument checker.

Each tool's `parameters` is a JSON-Schema object. `compile_validator` turns it, once, into plain
Python checks (types, enums, ranges, lengths, patterns, required and unknown names), so
validating a call costs a few microseconds rather than a full jsonschema run.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from devices.kit.errors import BadArguments

__all__ = [
    "Checker",
    "any_value",
    "array",
    "boolean",
    "compile_validator",
    "integer",
    "number",
    "obj",
    "string",
]

Checker = Callable[[dict[str, Any]], dict[str, Any]]


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

