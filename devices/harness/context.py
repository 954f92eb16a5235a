"""The one context renderer: what a language-model policy is shown, as a chat, at every step.

The chat is one user message (the *header*: goal, the phone's date and time, the task's tools,
skills, sub-agents, playbook notes, memory the harness shows up front, and the first screen), then
one assistant turn per past step (the action as a tool call, `devices.harness.answer`) and one tool
turn with what the phone answered. Every path renders it here — the harness (`Harness.context()`),
the model policy, the rollout's record, the curator's rows, SFT, GRPO's environments (TRL appends
the same tool turns) and evaluation — so a model is trained and scored on one format, and the
curator builds rows from the rollout's record (`EpisodeEnded.context`) without a simulator.

It is compact, because the prompt is most of the compute: tool signatures grouped by app with
short types and no prose (a description only where a name cannot say it: searches and finders,
whose matching rules the agent needs), the action list once (the chat template's compact list),
tool results as compact JSON with whole list rows and a count of what was left out (never a cut
through an id), and every past step kept. `drop_oldest_steps` is how a too-long row is shortened.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from collections.abc import Iterable, Sequence
from typing import Any

from devices.harness.answer import action_to_call
from schemas.observations import Observation

__all__ = [
    "CONTEXT_VERSION",
    "drop_oldest_steps",
    "episode_messages",
    "render_header",
    "render_observation",
    "render_result",
    "step_count",
]

logger = logging.getLogger(__name__)

#: The rendering's version, recorded with every episode and snapshot row; bumped when it changes.
CONTEXT_VERSION = "context/2"
# A tool result longer than this shows whole list rows up to it, then how many were left out.
MAX_RESULT_CHARS = 1200
# A message (dialog, reply) longer than this is cut; they are sentences, not data.
MAX_MESSAGE_CHARS = 400
# On a GUI screen, the agent sees at most this many labelled elements.
MAX_SCREEN_ELEMENTS = 16
# Skill and sub-agent descriptions route between look-alikes; beyond this they repeat themselves.
MAX_DESCRIPTION_CHARS = 110
# Tool verbs whose matching rules the name does not say (which fields a search looks in).
_DESCRIBED_VERBS = ("search", "find")
_WHOSE = re.compile(r"^Find \w+ whose (.+?) contains? the query\.?$")
_CLOCK = re.compile(r"^\d{1,2}:\d{2}$")
_SHORT_TYPES = {"integer": "int", "number": "num", "boolean": "bool", "array": "list", "object": "obj"}


def _type_hint(spec: Any, shown: set[str] | None = None) -> str:
    """`:int`, `:list`, … (nothing for a string); the allowed values of an enum, `:a|b|c`, and of a
    list of an enum, `:list[a|b]` — the agent cannot guess them. An enum already in `shown` (the
    same values earlier on the app's line) is not repeated."""
    spec = spec if isinstance(spec, dict) else {}
    items = spec.get("items")
    values = spec.get("enum") if isinstance(spec.get("enum"), list) else (
        items.get("enum") if spec.get("type") == "array" and isinstance(items, dict)
        and isinstance(items.get("enum"), list) else None)
    if values is not None:
        text = "|".join(str(v) for v in values)
        if shown is not None and text in shown:
            return ":list" if spec.get("type") == "array" else ""
        if shown is not None:
            shown.add(text)
        return f":list[{text}]" if spec.get("type") == "array" else f":{text}"
    kind = spec.get("type", "")
    if isinstance(kind, list):
        kind = "|".join(_SHORT_TYPES.get(k, k) for k in kind if k != "null")
    return "" if kind in ("string", "") else f":{_SHORT_TYPES.get(kind, kind)}"


def _signature(name: str, parameters: Any, shown: set[str] | None = None) -> str:
    parameters = parameters if isinstance(parameters, dict) else {}
    props = parameters.get("properties", {}) or {}
    required = set(parameters.get("required", []) or [])
    args = [f"{key}{_type_hint(spec, shown)}{'' if key in required else '?'}" for key, spec in props.items()]
    return f"{name}({', '.join(args)})"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _tool_lines(tools: Sequence[Any]) -> list[str]:
    """One line per app: `- app: verb(args), verb(args) — search(query): what it matches`."""
    by_app: dict[str, list[Any]] = {}
    for tool in tools:
        by_app.setdefault(tool.name.split(".", 1)[0], []).append(tool)
    lines = []
    for app, entries in by_app.items():
        calls = []
        shown: set[str] = set()  # enums written once per app line
        for tool in entries:
            verb = tool.name.split(".", 1)[1] if "." in tool.name else tool.name
            call = _signature(verb, tool.parameters, shown)
            if verb.split("_")[0] in _DESCRIBED_VERBS and tool.description:
                call += f" [{_clip(_matching(tool.description), MAX_DESCRIPTION_CHARS)}]"
            calls.append(call)
        lines.append(f"- {app}: " + ", ".join(calls))
    return lines


def _matching(description: str) -> str:
    """A search's description as what it matches: "Find contacts whose name or city contains the
    query." → "matches name or city"; other descriptions as they are, without the full stop."""
    found = _WHOSE.match(description.strip())
    return f"matches {found.group(1)}" if found else description.strip().rstrip(".")


def _apps_of(tools: Sequence[str], catalogue_tools: Sequence[Any]) -> str:
    """A sub-agent's tools, compactly: whole apps by name (`calendar.*`), other tools one by one."""
    known: dict[str, set[str]] = {}
    for tool in catalogue_tools:
        known.setdefault(tool.name.split(".", 1)[0], set()).add(tool.name)
    by_app: dict[str, list[str]] = {}
    for name in tools:
        by_app.setdefault(name.split(".", 1)[0], []).append(name)
    parts: list[str] = []
    for app, names in by_app.items():
        whole = known.get(app)
        parts += [f"{app}.*"] if whole and whole <= set(names) else names
    return ", ".join(parts)


def _now(clock_ms: int) -> str:
    moment = dt.datetime.fromtimestamp(clock_ms / 1000, tz=dt.UTC)
    return moment.strftime("%A %Y-%m-%d %H:%M")


def render_header(goal: str, catalogue: Any, observation: Observation | None = None, *,
                  memory: Sequence[tuple[str, Any]] = ()) -> str:
    """The first user message: goal, today's date and time, tools, skills, sub-agents, notes,
    the memory entries the harness shows up front, and the first screen."""
    lines = [f"Goal: {goal}"]
    if observation is not None:
        lines.append(f"Now: {_now(observation.clock_ms)}")
    tools = list(getattr(catalogue, "tools", ()) or ())
    if tools:
        lines.append('Tools (tool_call {"name": "app.verb", "arguments": {...}}; ? optional):')
        lines += _tool_lines(tools)
    skills = list(getattr(catalogue, "skills", ()) or ())
    if skills:
        lines.append("Skills (use_skill):")
        lines += [f"- {_signature(s.name, s.parameters)}: {_clip(s.description, MAX_DESCRIPTION_CHARS)}"
                  for s in skills]
    subagents = list(getattr(catalogue, "subagents", ()) or ())
    if subagents:
        lines.append('Sub-agents (delegate with arguments {"tool_calls": [{"name", "arguments"}]}):')
        lines += [f"- {a.name} [{_apps_of(a.tools, tools)}]: {_clip(a.description, MAX_DESCRIPTION_CHARS)}"
                  for a in subagents]
    playbook = list(getattr(catalogue, "playbook", ()) or ())
    if playbook:
        lines.append("Notes:")
        lines += [f"- {note}" for note in playbook]
    if memory:
        lines.append("Memory:")
        lines += [f"- {key}: {_json(value)}" for key, value in memory]
    if observation is not None:
        lines.append("Screen: " + render_observation(observation))
    return "\n".join(lines)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.replace("|", "/").replace("\n", " ")
    return _json(value)


def _table(rows: list[dict[str, Any]], limit: int) -> str:
    """Rows of one shape as a table: `N rows: key|key` then one `value|value` line per row (the
    keys are written once, not once per row); whole rows up to `limit` characters, then how many
    were left out."""
    keys: list[str] = []
    for row in rows:
        keys += [k for k in row if k not in keys]
    head = f"{len(rows)} rows: " + "|".join(keys)
    lines = _whole_rows(["|".join(_cell(row.get(k)) for k in keys) for row in rows], limit - len(head))
    left = len(rows) - len(lines)
    return "\n".join([head, *lines] + ([f"(+{left} more rows; search to narrow)"] if left else []))


def _whole_rows(rendered: list[str], budget: int) -> list[str]:
    """The leading rows that fit `budget` characters (each with a separator), at least one."""
    kept: list[str] = []
    used = 0
    for row in rendered:
        if used + len(row) + 1 > budget and kept:
            break
        kept.append(row)
        used += len(row) + 1
    return kept


def render_result(value: Any, limit: int = MAX_RESULT_CHARS) -> str:
    """A tool result, compactly: a list of objects as a table (keys once), anything else as
    compact JSON; a long list keeps whole rows up to `limit` characters and says how many rows it
    left out (so an id is shown whole or not at all)."""
    if isinstance(value, list) and len(value) > 1 and all(isinstance(v, dict) for v in value):
        return _table(value, limit)
    text = _json(value)
    if len(text) <= limit:
        return text
    if isinstance(value, list):
        shown = _whole_rows([_json(item) for item in value], limit - 2)
        left = len(value) - len(shown)
        return "[" + ",".join(shown) + "]" + (f" (+{left} more of {len(value)}; search to narrow)" if left else "")
    if isinstance(value, dict):
        parts, used = [], 2
        for key, item in value.items():
            part = f"{_json(key)}:{render_result(item, max(80, limit // 2))}"
            if used + len(part) + 1 > limit and parts:
                parts.append('"…":"(more fields)"')
                break
            parts.append(part)
            used += len(part) + 1
        return "{" + ",".join(parts) + "}"
    return _clip(text, limit)


def render_observation(observation: Observation) -> str:
    """What the phone showed after a step, compactly: a tool's result, any message, and after a
    GUI step (no tool result) the screen it left."""
    parts: list[str] = []
    result = observation.result
    if result is not None:
        if result.ok:
            parts.append(f"ok {render_result(result.value)}")
        else:
            error = result.error
            parts.append(f"error {error.code}: {error.message}" if error else "error")
    if observation.message:
        parts.append(_clip(observation.message, MAX_MESSAGE_CHARS))
    if result is None:  # a GUI step (or the first view): what is on the screen now
        parts.append(_screen(observation))
    if observation.done:
        parts.append("(episode ended)")
    return " | ".join(parts)


def _label(element: Any) -> str:
    """An element's label: its text or description; an empty text field shows its hint as
    `hint (field)`, so the agent can find where to type."""
    label = element.text or element.content_description or ""
    if not label and element.is_editable:
        label = f"{element.hint_text or 'text'} (field)"
    return label


def _screen(observation: Observation) -> str:
    """The screen: an app's labelled elements with the index a click takes; the home screen as
    the app names open_app takes (its clock is the header's `Now:`)."""
    shown = [(i, _label(e)) for i, e in enumerate(observation.screen) if _label(e) and e.is_visible]
    if observation.foreground_app in (None, "home"):
        names = [label for _, label in shown if not _CLOCK.match(str(label))]
        return "home: " + ", ".join(names)
    labels = [f"[{i}]{label}" for i, label in shown[:MAX_SCREEN_ELEMENTS]]
    return f"{observation.foreground_app}: {' '.join(labels)}"


def episode_messages(header: str, steps: Iterable[tuple[Any, Observation]]) -> list[dict[str, Any]]:
    """The chat the policy answers next: the header, then every past (action, observation) step
    as an assistant tool call and a tool reply."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": header}]
    for action, observation in steps:
        call = action_to_call(action)
        messages.append({"role": "assistant", "content": "",
                         "tool_calls": [{"type": "function", "function": call}]})
        messages.append({"role": "tool", "name": call["name"], "content": render_observation(observation)})
    return messages


def step_count(messages: Sequence[dict[str, Any]]) -> int:
    """How many past steps a chat from `episode_messages` holds."""
    return sum(1 for m in messages if m.get("role") == "assistant")


def drop_oldest_steps(messages: Sequence[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """The chat without its `n` oldest past steps (the header always stays); the one way a row
    that is too long for training is shortened."""
    head, rest = list(messages[:1]), list(messages[1:])
    dropped = 0
    while rest and dropped < n:
        rest = rest[1:]
        while rest and rest[0].get("role") == "tool":
            rest = rest[1:]
        dropped += 1
    if dropped:
        head = [{**head[0], "content": head[0]["content"] + f"\n({dropped} earlier steps not shown)"}]
    return head + rest
