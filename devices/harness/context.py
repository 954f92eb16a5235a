"""The compact context a language-model policy reads: c_t = H(goal, catalogue, memory, playbook,
recent steps), kept under a token budget.

Sections are rendered in priority order — goal, playbook, memory (most relevant to the goal
first), catalogue, recent steps (newest first), the latest screen — and the lowest-priority
content is cut first, so the goal and the newest observation always fit. Tokens are counted as
whitespace-separated words plus punctuation runs, a tokenizer-free estimate that over-counts
slightly for sub-word tokenizers.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any

from devices.harness.catalogue import Catalogue
from devices.harness.memory import is_note, rank
from devices.harness.spec import HarnessSpec
from devices.harness.state import HarnessState

__all__ = ["count_tokens", "render_context"]

logger = logging.getLogger(__name__)

_TOKEN = re.compile(r"\w+|[^\w\s]")
# A tool result in the history is cut to this many characters: enough for a few rows.
_RESULT_CHARS = 600


def count_tokens(text: str) -> int:
    """An estimate of the token count: words and punctuation marks."""
    return len(_TOKEN.findall(text))


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _tool_line(tool: Any) -> str:
    props = tool.parameters.get("properties", {}) if isinstance(tool.parameters, dict) else {}
    required = set(tool.parameters.get("required", []) or []) if isinstance(
        tool.parameters, dict) else set()
    args = ", ".join(f"{k}{'' if k in required else '?'}" for k in props)
    return f"- {tool.name}({args}): {tool.description}"


def _step_lines(step: Any) -> list[str]:
    action = step.action.model_dump(mode="json", exclude_none=True)
    obs = step.observation
    lines = [f"step {obs.step}: {_json(action)}"]
    if obs.result is not None:
        if obs.result.ok:
            lines.append(f"  → ok {_clip(_json(obs.result.value), _RESULT_CHARS)}")
        else:
            error = obs.result.error
            lines.append(f"  → error {error.code if error else ''}: "
                         f"{error.message if error else ''}")
    if obs.message:
        lines.append(f"  message: {obs.message}")
    return lines


def render_context(goal: str, catalogue: Catalogue, state: HarnessState, history: Sequence[Any],
                   spec: HarnessSpec, *, budget_tokens: int | None = None) -> str:
    """The context text, at most `budget_tokens` (default: the spec's) tokens long."""
    budget = budget_tokens or spec.context.budget_tokens
    sections: list[tuple[str, list[str]]] = [("GOAL", [goal])]
    if catalogue.playbook:
        sections.append(("PLAYBOOK", [f"- {note}" for note in catalogue.playbook]))
    if spec.memory.context_entries:
        hits = rank(goal, state.memory_items(), spec.memory.context_entries)
        facts = [f"- {k}: {_json(v)}" for k, v in hits if not is_note(k)]
        notes = [f"- {k}: {_json(v)}" for k, v in hits if is_note(k)]
        if facts or notes:
            sections.append(("MEMORY", facts + notes))
    tools = [_tool_line(t) for t in catalogue.tools]
    tools += [f"- skill {s.name}: {s.description}" for s in catalogue.skills]
    tools += [f"- sub-agent {a.name} ({', '.join(a.tools)}): {a.description}"
              for a in catalogue.subagents]
    sections.append(("CATALOGUE", tools))
    recent = list(history)[-spec.context.recent_steps:] if spec.context.recent_steps else []
    steps = [line for step in reversed(recent) for line in _step_lines(step)]
    if steps:
        sections.append(("RECENT (newest first)", steps))
    if history:
        screen = history[-1].observation.screen[: spec.context.screen_elements]
        shown = [f"[{i}] {e.text or e.content_description or e.class_name or ''}".rstrip()
                 for i, e in enumerate(screen)]
        sections.append(("SCREEN", shown))
    # Fill in priority order (goal first); within a section keep lines while they fit.
    used = 0
    out: list[str] = []
    priority = ["GOAL", "RECENT (newest first)", "PLAYBOOK", "MEMORY", "CATALOGUE", "SCREEN"]
    chosen: dict[str, list[str]] = {}
    for title in priority:
        lines = dict(sections).get(title)
        if not lines:
            continue
        header = count_tokens(title) + 2
        if used + header > budget:
            break
        kept: list[str] = []
        used += header
        for line in lines:
            cost = count_tokens(line)
            if used + cost > budget:
                break
            kept.append(line)
            used += cost
        chosen[title] = kept
    for title, _ in sections:
        if chosen.get(title):
            out.append(f"## {title}")
            out.extend(chosen[title])
    return "\n".join(out)
