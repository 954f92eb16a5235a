"""Lookup-first attackers: heuristics that read before they write, and still never plan.

The goal-copying attackers in devices.suite.baselines never read an observation. These do:
they call every search or list tool the goal's words suggest, then act on the row that shares
most words with the goal — the "first row of the right kind" — filling a write tool, a skill,
a sub-agent's plan or a memory entry from that row. One issue measured such a ~200-line policy
at 0.094 on test, 13 times the best goal copier, from checker gaps (conditionals not checked,
dumps accepted, counts guessable). CI holds each of them to the red-team bar
(tests/devices/suite/test_red_team.py): at most 0.05 overall and 0.10 in any family × tier cell.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from devices.suite.scripted import _overlap, _Scripted
from schemas.actions import Delegate, Finish, MemoryRead, MemoryWrite, ToolCall, UseSkill

__all__ = ["LOOKUP_ATTACKERS", "LookupFirst", "MemoryKeyMatcher", "SkillMatcher", "SubagentMatcher"]

#: Reads an attacker makes before it acts (a real agent's budget is the step cap).
MAX_READS = 10
_LOCATION_KEYS = ("destination", "address", "location", "origin", "city")


def _rows(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, list):
        return [v for v in value if isinstance(v, dict)]
    if isinstance(value, dict):
        inner = [v for v in value.values() if isinstance(v, list)]
        return _rows(inner[0]) if inner else [value]
    return []


class _Looker(_Scripted):
    """Reads first: every search tool with the goal's names and phrases, every list tool that
    needs no argument; keeps the rows by app."""

    rows: list[tuple[str, dict[str, Any]]]

    def begin(self, goal: str, catalogue: Any) -> None:
        super().begin(goal, catalogue)
        self.rows = []

    def look(self, apps: set[str] | None = None) -> Iterator[Any]:
        phrases = list(dict.fromkeys([*self.reader.quoted, *self.reader.names, *self.reader.relations]))[:3]
        phrases = phrases or [w for w in re.findall(r"[a-z]{5,}", self.goal.lower())][:2]
        reads = 0
        for tool in self.tools(writes=False):
            if apps is not None and tool.app not in apps:
                continue
            required = set(tool.parameters.get("required", []) or [])
            calls = ([{"query": q} for q in phrases] if required == {"query"}
                     else [{}] if not required else [])
            for arguments in calls:
                if reads >= MAX_READS:
                    return
                reads += 1
                yield ToolCall(name=tool.name, arguments=arguments)
                result = self._last.result if self._last else None
                if result is not None and result.ok:
                    self.rows += [(tool.app, row) for row in _rows(result.value)]

    def best_row(self, app: str | None = None) -> dict[str, Any]:
        """The row that shares most words with the goal (of `app` when it has any)."""
        mine = [r for a, r in self.rows if a == app] or [r for _, r in self.rows]
        return max(mine, key=lambda r: _overlap(self.goal, json.dumps(r, default=str)), default={})

    def fill(self, schema: dict[str, Any], app: str | None = None) -> dict[str, Any]:
        """Arguments for `schema`: ids and same-named fields from the best row, people and places
        from the best contact or place row, the rest lifted from the goal."""
        base = self.reader.arguments(schema, self.now)
        row = self.best_row(app)
        person = self.best_row("contacts")
        props = schema.get("properties", {}) or {}
        for key in props:
            if key not in base and key not in (schema.get("required") or []):
                continue
            if (key == "id" or key.endswith("_id")) and "id" in row:
                base[key] = row["id"]
            elif key in row and not isinstance(row[key], (dict, list)):
                base[key] = row[key]
            elif key in ("contact", "name", "person") and "name" in person:
                base[key] = person["name"]
            elif key == "phone" and "phone" in person:
                base[key] = person["phone"]
            elif key in _LOCATION_KEYS:
                base[key] = row.get("address") or row.get("location") or row.get("city") or base[key]
        return base

    def answer(self) -> Any:
        if self.goal.lower().startswith("how many"):
            return str(len(self.rows))
        row = self.best_row()
        return row.get("name") or row.get("title") or row.get("subject") or next(
            (v for k, v in row.items() if k != "id" and isinstance(v, str)), None)


class LookupFirst(_Looker):
    """Searches with the goal's words, then calls the write tool the goal resembles most with
    the best row's values; answers with that row's name, or the row count for "how many"."""

    name = "lookup_first"

    def script(self) -> Iterator[Any]:
        yield from self.look()
        writes = self.tools(writes=True)
        if writes:
            tool = max(writes, key=lambda t: _overlap(self.goal, f"{t.name.replace('.', ' ')} {t.description}"))
            yield ToolCall(name=tool.name, arguments=self.fill(tool.parameters, tool.app))
        yield Finish(answer=self.answer())


class SkillMatcher(_Looker):
    """Looks up first, then runs the skill whose name and description match the goal best,
    filled from the best rows."""

    name = "skill_matcher"

    def script(self) -> Iterator[Any]:
        yield from self.look()
        if self.catalogue.skills:
            skill = max(self.catalogue.skills,
                        key=lambda s: _overlap(self.goal, f"{s.name.replace('_', ' ')} {s.description}"))
            yield UseSkill(skill=skill.name, arguments=self.fill(skill.parameters))
        yield Finish(answer=self.answer())


class SubagentMatcher(_Looker):
    """Looks up first, then hands the sub-agent the goal matches best a plan of its best write
    tool, filled from the best rows."""

    name = "subagent_matcher"

    def script(self) -> Iterator[Any]:
        yield from self.look()
        agents = [a for a in self.catalogue.subagents if a.tools]
        if agents:
            agent = max(agents, key=lambda a: _overlap(self.goal, f"{a.name} {a.description}"))
            mine = [t for t in self.tools(writes=True) if t.name in set(agent.tools)]
            if mine:
                tool = max(mine, key=lambda t: _overlap(self.goal, f"{t.name.replace('.', ' ')} {t.description}"))
                plan = [{"name": tool.name, "arguments": self.fill(tool.parameters, tool.app)}]
                yield Delegate(agent=agent.name, instruction=self.goal, arguments={"tool_calls": plan})
        yield Finish(answer=self.answer())


class MemoryKeyMatcher(_Looker):
    """Reads memory with the goal's words; forgets the best-matching key when the goal says
    forget, else writes the goal's noun as the key with the best looked-up value; answers with
    the best memory value."""

    name = "memory_key_matcher"

    def script(self) -> Iterator[Any]:
        words = " ".join(re.findall(r"[a-z]{4,}", self.goal.lower()))
        yield MemoryRead(query=words)
        result = self._last.result if self._last else None
        hits = result.value if result is not None and result.ok and isinstance(result.value, dict) else {}
        best = max(hits, key=lambda k: _overlap(self.goal, k.replace("_", " ")), default=None)
        lowered = self.goal.lower()
        if best is not None and any(w in lowered for w in ("forget", "no longer", "don't", "any more")):
            yield MemoryWrite(key=best, value=None)
            yield Finish()
            return
        if any(w in lowered for w in ("remember", "keep", "save", "note", "memory", "update")):
            yield from self.look()
            key = (best or "_".join(re.findall(r"[a-z]{4,}", lowered)[-2:]) or "note")
            value = self.answer() or (self.reader.quoted or self.reader.names or [self.goal])[0]
            yield MemoryWrite(key=key, value=value)
            yield Finish()
            return
        answer = hits.get(best) if best is not None else None
        yield Finish(answer=answer if isinstance(answer, str) else self.answer())


LOOKUP_ATTACKERS = {"lookup_first": LookupFirst, "skill_matcher": SkillMatcher,
                    "subagent_matcher": SubagentMatcher, "memory_key_matcher": MemoryKeyMatcher}
