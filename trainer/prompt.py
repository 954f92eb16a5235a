"""The planner's prompt and answer format: a compact harness context in, one action as JSON out.

The prompt is a chat: one user message with the context (goal, the task's tools only, skills,
sub-agents, playbook notes, memory and the first observation), then one assistant turn per past
step (the action as a `<tool_call>`) and one tool turn with what the phone showed, keeping only
the last `history` steps. The same chat is what TRL's multi-turn GRPO builds from an environment,
so SFT, RL and evaluation see one format. The answer is one action, written with the chat
template's tool-call syntax: `<tool_call>\n{"name": <action_type>, "arguments": {...}}\n</tool_call>`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from schemas.actions import parse_action
from schemas.observations import Observation

__all__ = [
    "InvalidAction",
    "action_to_call",
    "episode_messages",
    "format_action",
    "history_messages",
    "parse_completion",
    "render_context",
    "render_observation",
]

logger = logging.getLogger(__name__)

# A tool result longer than this is cut: long lists would otherwise dominate the prompt.
MAX_RESULT_CHARS = 400
# On a GUI screen, the agent sees at most this many labelled elements.
MAX_SCREEN_ELEMENTS = 12
_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.DOTALL)
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


@dataclass(frozen=True)
class InvalidAction:
    """Model output that is not one valid action: a failure category of its own."""

    text: str
    reason: str
    action_type: str = "invalid"


def _signature(name: str, parameters: dict[str, Any]) -> str:
    props = (parameters or {}).get("properties", {}) or {}
    required = set((parameters or {}).get("required", []) or [])
    args = []
    for key, spec in props.items():
        kind = (spec or {}).get("type", "")
        hint = "" if kind in ("string", "") else f":{kind if isinstance(kind, str) else '|'.join(kind)}"
        args.append(f"{key}{hint}{'' if key in required else '?'}")
    return f"{name}({', '.join(args)})"


def render_context(goal: str, catalogue: Any, *, memory: dict[str, Any] | None = None,
                   observation: Observation | None = None) -> str:
    """The user message: goal, tools (one line each), skills, sub-agents, playbook, memory, first view."""
    lines = [f"Goal: {goal}", "Tools (call with tool_call):"]
    lines += [f"- {_signature(t.name, t.parameters)}: {t.description}" for t in catalogue.tools]
    if getattr(catalogue, "skills", None):
        lines.append("Skills (use_skill):")
        lines += [f"- {_signature(s.name, s.parameters)}: {s.description}" for s in catalogue.skills]
    if getattr(catalogue, "subagents", None):
        lines.append("Sub-agents (delegate with arguments {\"tool_calls\": [{name, arguments}]}):")
        lines += [f"- {a.name} [{_apps_of(a.tools)}]: {a.description}" for a in catalogue.subagents]
    if getattr(catalogue, "playbook", None):
        lines.append("Notes:")
        lines += [f"- {note}" for note in catalogue.playbook]
    if memory:
        lines.append("Memory: " + json.dumps(memory, separators=(",", ":"))[:MAX_RESULT_CHARS])
    if observation is not None:
        lines.append("Screen: " + render_observation(observation))
    return "\n".join(lines)


def _apps_of(tools: list[str]) -> str:
    """A sub-agent's tools, compactly: whole apps by name (`calendar.*`), other tools one by one
    (the prompt is read every step, so a helper with 20 tools must not cost 20 names)."""
    import devices.sim.phone  # noqa: F401 - registers every app's tools
    from devices.sim.tools import REGISTRY as TOOLS

    by_app: dict[str, list[str]] = {}
    for name in tools:
        by_app.setdefault(name.split(".", 1)[0], []).append(name)
    parts = []
    for app, names in by_app.items():
        whole = {t for t in TOOLS if t.split(".", 1)[0] == app}
        parts += [f"{app}.*"] if whole and whole <= set(names) else names
    return ", ".join(parts)


def render_observation(observation: Observation) -> str:
    """What the phone showed after a step, compactly: the result, any message, else the screen."""
    parts: list[str] = []
    result = observation.result
    if result is not None:
        if result.ok:
            value = json.dumps(result.value, separators=(",", ":"), default=str)
            parts.append(f"ok {value[:MAX_RESULT_CHARS]}")
        else:
            error = result.error
            parts.append(f"error {error.code}: {error.message}" if error else "error")
    if observation.message:
        parts.append(observation.message[:MAX_RESULT_CHARS])
    if not parts:
        labels = [f"[{i}]{e.text or e.content_description}" for i, e in enumerate(observation.screen)
                  if (e.text or e.content_description) and e.is_visible][:MAX_SCREEN_ELEMENTS]
        parts.append(f"{observation.foreground_app or 'home'}: {' '.join(labels)}")
    if observation.done:
        parts.append("(episode ended)")
    return " | ".join(parts)


def action_to_call(action: Any) -> dict[str, Any]:
    """An action as a chat tool call: {"name": action_type, "arguments": the other fields}."""
    data = action.model_dump(mode="json", exclude_defaults=True)  # a required None (memory value) stays
    data.pop("action_type", None)
    return {"name": action.action_type, "arguments": data}


def format_action(action: Any) -> str:
    """The planner's answer text for `action` (what SFT teaches and the chat template renders)."""
    call = action_to_call(action)
    return ('<tool_call>\n{"name": "' + call["name"] + '", "arguments": '
            + json.dumps(call["arguments"], ensure_ascii=False) + "}\n</tool_call>")


def _from_call(call: dict[str, Any]) -> Any:
    name = call.get("name")
    arguments = call.get("arguments", {})
    if isinstance(arguments, str):
        arguments = json.loads(arguments)
    if not isinstance(name, str) or not isinstance(arguments, dict):
        raise TypeError("a tool call needs a string name and an object of arguments")
    return parse_action({**arguments, "action_type": name})


def parse_completion(text: str) -> Any:
    """The action in a model's answer, or InvalidAction saying why it is not one. Never raises.

    Accepts the planner format (`<tool_call>{"name", "arguments"}</tool_call>`) and, as a
    fallback, a bare AndroidWorld-style action object (`{"action_type": ...}`).
    """
    try:
        match = _TOOL_CALL.search(text)
        if match:
            return _from_call(json.loads(match.group(1).strip()))
        bare = _JSON_OBJECT.search(text)
        if bare:
            data = json.loads(bare.group(0))
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


def history_messages(steps: Sequence[tuple[Any, Observation]], keep: int) -> list[dict[str, Any]]:
    """The last `keep` (action, observation) steps as assistant tool calls and tool replies."""
    messages: list[dict[str, Any]] = []
    for action, observation in list(steps)[-keep:] if keep > 0 else []:
        call = action_to_call(action)
        messages.append({"role": "assistant", "content": "",
                         "tool_calls": [{"type": "function", "function": call}]})
        messages.append({"role": "tool", "name": call["name"], "content": render_observation(observation)})
    return messages


def episode_messages(context: str, steps: Iterable[tuple[Any, Observation]], keep: int) -> list[dict[str, Any]]:
    """The chat the policy answers next: the context, then the recent steps."""
    return [{"role": "user", "content": context}, *history_messages(list(steps), keep)]
