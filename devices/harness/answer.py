"""The planner's answer format: one action as `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`.

One writer (`format_action`) and one reader (`parse_completion`) serve every path: SFT targets,
the model policy, GRPO's environments and the chat template's rendering of past steps. The writer
always emits an `arguments` object (empty ones included), so every answer has the same shape; the
reader takes the first complete JSON value after `<tool_call>` and ignores whatever follows it (a
model that writes one brace too many still acted). Output that is not one valid action is an
`InvalidAction`, a failure category of its own.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from schemas.actions import parse_action

__all__ = ["InvalidAction", "action_to_call", "format_action", "parse_completion"]

logger = logging.getLogger(__name__)

_TOOL_CALL = re.compile(r"<tool_call>\s*", re.DOTALL)
# Fields that hold an argument object: always written, even when empty, so no answer ends in a
# different number of closing braces than another of the same action.
_OBJECT_FIELDS = ("arguments",)
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class InvalidAction:
    """Model output that is not one valid action: a failure category of its own."""

    text: str
    reason: str
    action_type: str = "invalid"


def action_to_call(action: Any) -> dict[str, Any]:
    """An action as a chat tool call: {"name": action_type, "arguments": the other fields}; an
    action's own argument object (tool_call, use_skill, delegate) is always present."""
    data = action.model_dump(mode="json", exclude_defaults=True)  # a required None (memory value) stays
    data.pop("action_type", None)
    for key in _OBJECT_FIELDS:
        if key in type(action).model_fields and key not in data:
            data[key] = {}
    return {"name": action.action_type, "arguments": data}


def format_action(action: Any) -> str:
    """The planner's answer text for `action` (what SFT teaches and the chat template renders)."""
    call = action_to_call(action)
    return ('<tool_call>\n{"name": "' + call["name"] + '", "arguments": '
            + json.dumps(call["arguments"], ensure_ascii=False) + "}\n</tool_call>")


def _from_call(call: Any) -> Any:
    if not isinstance(call, dict):
        raise TypeError("a tool call is a JSON object with a name and arguments")
    name = call.get("name")
    arguments = call.get("arguments", {})
    if isinstance(arguments, str):
        arguments = json.loads(arguments)
    if not isinstance(name, str) or not isinstance(arguments, dict):
        raise TypeError("a tool call needs a string name and an object of arguments")
    return parse_action({**arguments, "action_type": name})


def _first_value(text: str, start: int) -> Any:
    """The first complete JSON value at or after `start` (leading text before a `{` is skipped);
    anything after it is ignored."""
    brace = text.find("{", start)
    if brace < 0:
        raise json.JSONDecodeError("no JSON object", text, start)
    value, _ = _DECODER.raw_decode(text, brace)
    return value


def parse_completion(text: str) -> Any:
    """The action in a model's answer, or InvalidAction saying why it is not one. Never raises.

    Reads the planner format (`<tool_call>{"name", "arguments"}</tool_call>`) and, as a
    fallback, a bare object: AndroidWorld-style (`{"action_type": ...}`) or `{"name", "arguments"}`.
    """
    try:
        match = _TOOL_CALL.search(text)
        if match:
            return _from_call(_first_value(text, match.end()))
        if "{" not in text:
            return InvalidAction(text=text, reason="no action JSON in the output")
        data = _first_value(text, 0)
        if isinstance(data, dict) and "action_type" in data:
            return parse_action(data)
        if isinstance(data, dict) and "name" in data:
            return _from_call(data)
        return InvalidAction(text=text, reason="no action JSON in the output")
    except json.JSONDecodeError as exc:
        return InvalidAction(text=text, reason=f"malformed JSON: {exc.msg}")
    except (ValidationError, ValueError, TypeError) as exc:
        first = str(exc).splitlines()[0][:200]
        return InvalidAction(text=text, reason=f"not a valid action: {first}")
