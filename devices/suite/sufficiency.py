"""Information sufficiency: every value the oracle acts with is one the agent could know.

Before each oracle step the harness's context (the one the policy is shown) is rendered; every
leaf value of the oracle's action is then either *visible* in it (case-folded; numbers in their
usual spellings) or derived by a rule the template declares in `devices.suite.derived`:

- `date arithmetic`: a date or time computed from dates the agent saw (today + 3 days, an hour
  later);
- `arithmetic`: a number computed from numbers it saw (a half, a sum, a count);
- `composed text`: free text the agent writes itself (an instruction, a note body, a memory key
  or query).

A value that is neither is `missing`: the task asks for something the agent never sees, a defect
of the suite or of the context (a cut result, a hidden enum). The suite's tests run this on
every template of every split; `flywheel suite stats` lists each template's rules.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RULES", "Finding", "audit_task", "classify"]

logger = logging.getLogger(__name__)

RULES = ("date arithmetic", "arithmetic", "composed text")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2})?)?$|^\d{1,2}:\d{2}$")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
# Argument names whose value is text the agent composes (instructions, bodies, titles, keys).
_FREE_TEXT = frozenset({"instruction", "query", "key", "value", "body", "title", "text", "notes", "message",
                        "label", "subject", "name", "answer", "note", "append", "question", "tag", "caption",
                        "description"})
# Fields that name what is called, not a value passed (checked by the catalogue, not here).
_CALLEE = {"tool_call": "name", "use_skill": "skill", "delegate": "agent"}


@dataclass
class Finding:
    """How each value of one task's oracle actions reached the agent."""

    template: str
    counts: dict[str, int] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)  # "step N action: path=value"

    @property
    def rules(self) -> set[str]:
        return {c for c in self.counts if c in RULES}


def _leaves(value: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, str(key)))
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, path)
    elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
        yield path, value


def _spellings(value: Any) -> set[str]:
    text = str(value).casefold()
    forms = {text}
    if isinstance(value, float):
        forms.add(f"{value:.2f}")
        if value == int(value):
            forms.add(str(int(value)))
    return forms


def classify(path: tuple[str, ...], value: Any, shown: str) -> str:
    """`visible`, one of RULES, or `missing` for one value at `path` given the shown text. A screen
    index (`index` of a click or a typed text) is visible only as a shown element `[N]`."""
    if path and path[-1] == "index":
        return "visible" if f"[{value}]" in shown else "missing"
    if any(form in shown for form in _spellings(value)):
        return "visible"
    if isinstance(value, str) and _DATE.match(value):
        return "date arithmetic"
    if isinstance(value, (int, float)) or _NUMBER.match(str(value)):
        return "arithmetic"
    if path and path[-1] in _FREE_TEXT:
        return "composed text"
    return "missing"


def _shown(messages: list[dict[str, Any]]) -> str:
    """Everything the context shows, as one case-folded text (past calls' arguments included)."""
    calls = [m.get("tool_calls") for m in messages if m.get("tool_calls")]
    return ("\n".join(str(m.get("content") or "") for m in messages)
            + json.dumps(calls, ensure_ascii=False)).casefold()


def audit_task(task: Any, harness: Any) -> Finding:
    """Plays the oracle on `task` in `harness` (reset here) and classifies every value it acts with."""
    from devices.harness.episode import play
    from devices.suite.policies import OraclePolicy

    finding = Finding(template=task.template)

    def on_step(step: int, _observation: Any, action: Any) -> None:
        shown = _shown(harness.context_messages())
        data = action.model_dump(mode="json", exclude_defaults=True)
        data.pop("action_type", None)
        data.pop(_CALLEE.get(action.action_type, ""), None)
        for path, value in _leaves(data):
            kind = classify(path, value, shown)
            finding.counts[kind] = finding.counts.get(kind, 0) + 1
            if kind == "missing":
                finding.missing.append(f"step {step} {action.action_type}: {'/'.join(path)}={str(value)[:60]}")

    play(harness, task, OraclePolicy(), on_step=on_step)
    return finding
