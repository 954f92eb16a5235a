"""Shared helpers for writing templates: schemas, row builders, oracle steps."""

from __future__ import annotations

import random
from typing import Any

from schemas.actions import Finish, MemoryRead, ToolCall
from schemas.observations import Observation

__all__ = [
    "DATES",
    "I",
    "L",
    "N",
    "S",
    "call",
    "email_of",
    "finish",
    "first_id",
    "params_schema",
    "phone_number",
    "read_memory",
    "result_value",
    "slug",
]

S = {"type": "string"}
I = {"type": "integer"}
N = {"type": "number"}
L = {"type": "array", "items": {"type": "string"}}

# Dates the tasks happen on: the first weeks of the simulated year (the clock starts 2026-01-01).
DATES = ("2026-01-05", "2026-01-06", "2026-01-07", "2026-01-08", "2026-01-09", "2026-01-12",
         "2026-01-13", "2026-01-14")


def params_schema(**props: dict[str, Any]) -> dict[str, Any]:
    """A JSON Schema object for a template's parameters (all required)."""
    return {"type": "object", "properties": props, "required": sorted(props)}


def call(tool: str, /, **arguments: Any) -> ToolCall:
    """A tool call action (positional-only tool name, so `name=` can be a tool argument)."""
    return ToolCall(name=tool, arguments=arguments)


def finish(answer: Any = None) -> Finish:
    return Finish(answer=answer)


def read_memory(key: str) -> MemoryRead:
    return MemoryRead(key=key)


def result_value(observation: Observation) -> Any:
    """The value of the last tool result (None when the last action failed or had none)."""
    result = observation.result
    if result is None or not result.ok:
        return None
    return result.value


def first_id(value: Any) -> str | None:
    """The id of the first row in a tool result that is a row or a list of rows."""
    if isinstance(value, dict):
        if "id" in value:
            return str(value["id"])
        for inner in value.values():
            found = first_id(inner)
            if found:
                return found
    if isinstance(value, list) and value:
        return first_id(value[0])
    return None


def phone_number(rng: random.Random) -> str:
    """A fresh, plausible mobile number (the 555-01xx block is reserved for fiction)."""
    return f"+1-555-01{rng.randrange(100):02d}-{rng.randrange(10000):04d}"


def slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in text.casefold()).strip("_")


def email_of(person: str, domain: str = "example.org") -> str:
    first, _, last = person.partition(" ")
    return f"{first.casefold()}.{(last or 'x').casefold()}@{domain}"
