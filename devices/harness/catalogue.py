"""The catalogue a policy sees: tools (descriptions + JSON-Schema arguments), skills, sub-agents
and playbook notes, filtered to the task's apps and described as the harness spec says."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import Field, JsonValue

from devices.harness.spec import HarnessSpec
from schemas.envelope import Frozen

__all__ = ["Catalogue", "SkillEntry", "SubagentEntry", "ToolEntry", "build_catalogue", "catalogue_of", "tool_entries"]

logger = logging.getLogger(__name__)


class ToolEntry(Frozen):
    name: str = Field(min_length=1)
    app: str
    description: str
    parameters: dict[str, JsonValue] = Field(description="JSON Schema of the arguments.")
    writes: bool = Field(description="Whether the tool changes state (else it only reads).")


class SkillEntry(Frozen):
    name: str = Field(min_length=1)
    description: str
    parameters: dict[str, JsonValue]


class SubagentEntry(Frozen):
    name: str = Field(min_length=1)
    description: str
    tools: list[str]


class Catalogue(Frozen):
    """Everything a policy may call, as the harness describes it."""

    tools: list[ToolEntry] = Field(default_factory=list)
    skills: list[SkillEntry] = Field(default_factory=list)
    subagents: list[SubagentEntry] = Field(default_factory=list)
    playbook: list[str] = Field(default_factory=list)

    def tool(self, name: str) -> ToolEntry | None:
        return next((t for t in self.tools if t.name == name), None)

    @property
    def tool_names(self) -> list[str]:
        return [t.name for t in self.tools]


# Tool verbs that only read (everything else writes): a tool is a reader when its action part
# is one of these, starts with one and "_", or ends with "_" and one.
_READ_VERBS = ("search", "list", "get", "read", "view", "status", "now", "forecast", "current",
               "eta", "find", "balance", "scale")


# Tools that change state although their name reads like a lookup: opening an email marks it
# read, as a mail app does (tests/devices/harness/test_read_only.py runs every reader to check).
_WRITES_DESPITE_NAME = frozenset({"email.read"})
# Verbs that always write, whatever they end in (`mark_read`).
_WRITE_PREFIXES = ("mark_",)


def is_write_tool(name: str) -> bool:
    """Whether a tool changes state, judged from its name (`app.verb_object`)."""
    verb = name.split(".", 1)[-1]
    if name in _WRITES_DESPITE_NAME or verb.startswith(_WRITE_PREFIXES):
        return True
    return not any(verb == v or verb.startswith(f"{v}_") or verb.endswith(f"_{v}")
                   for v in _READ_VERBS)


def build_catalogue(spec: HarnessSpec, tools: Mapping[str, Any],
                    apps: Iterable[str] = ()) -> Catalogue:
    """The catalogue for one task: the device's `tools` (name → spec with app, description and
    parameters) limited to `apps` (empty: every app) and minus the spec's hidden tools; skills
    and sub-agents whose every tool is shown; the playbook."""
    return catalogue_of(spec, tool_entries(spec, tools), apps)


def tool_entries(spec: HarnessSpec, tools: Mapping[str, Any]) -> list[ToolEntry]:
    """Every tool of the device the spec does not hide, by name, as the catalogue shows it (a
    harness builds these once and `catalogue_of` picks a task's apps from them)."""
    hidden = set(spec.tools.hidden)
    return [ToolEntry(name=name, app=getattr(tools[name], "app", name.split(".", 1)[0]),
                      description=spec.tools.descriptions.get(
                          name, getattr(tools[name], "description", "")),
                      parameters=dict(getattr(tools[name], "parameters", {}) or {}),
                      writes=is_write_tool(name))
            for name in sorted(tools) if name not in hidden]


def catalogue_of(spec: HarnessSpec, entries: Sequence[ToolEntry], apps: Iterable[str] = ()
                 ) -> Catalogue:
    """The catalogue of the `entries` (from `tool_entries`) whose app is in `apps` (empty:
    every app), with the skills and sub-agents whose every tool is shown and the playbook."""
    wanted = set(apps)
    shown_entries = [t for t in entries if not wanted or t.app in wanted]
    shown = {t.name for t in shown_entries}
    skills = [SkillEntry(name=s.name, description=s.description, parameters=dict(s.parameters))
              for s in spec.skills if all(step.tool in shown for step in s.steps)]
    subagents = []
    for agent in spec.subagents:
        usable = [t for t in sorted(shown) if agent.may_call(t)]
        if usable:
            subagents.append(SubagentEntry(name=agent.name, description=agent.description,
                                           tools=usable))
    return Catalogue(tools=shown_entries, skills=skills, subagents=subagents,
                     playbook=list(spec.playbook))
