"""Baselines against the public policy protocol: do-nothing agents and attackers trying to score.

Every policy here sees only what an agent on a phone sees (contract §1): the goal text, the
catalogue (tools with descriptions and argument schemas, skills, sub-agents) and each
observation. The attackers never plan; they copy strings from the goal, spray write calls,
dump every candidate as the answer, try every skill and delegate to everyone. The suite is
sound only while each of them stays near zero; when one scores, the task or checker is fixed,
never the attacker.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from statistics import fmean
from typing import Any

from devices.protocol import TaskInstance
from devices.suite.diff import CheckResult
from devices.suite.scoring import score_final_state
from schemas.actions import Delegate, Finish, ToolCall, UseSkill
from schemas.observations import Observation

__all__ = [
    "ATTACKERS",
    "AnswerEveryCandidate",
    "CallEveryWriteTool",
    "CombinedAttack",
    "DelegateToEveryone",
    "GoalCopier",
    "TryEverySkill",
    "baseline_table",
    "run_public_episode",
    "score_public",
]

logger = logging.getLogger(__name__)

# Verbs of tools that only read (used when a catalogue entry carries no `writes` flag).
_READ_VERBS = ("search", "list", "get", "read", "view", "status", "now", "forecast", "current", "eta",
               "find", "balance", "scale")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DURATIONS = {"half an hour": 30, "a quarter of an hour": 15, "three quarters of an hour": 45,
              "an hour and a half": 90, "twenty minutes": 20, "an hour": 60, "ten minutes": 10,
              "forty minutes": 40, "fifty minutes": 50, "an hour and a quarter": 75, "two hours": 120,
              "five minutes": 5, "twenty-five minutes": 25}
_STOP = {"The", "I", "My", "If", "What", "Which", "How", "Where", "Add", "Put", "Make", "Move", "Text",
         "Email", "Reply", "Save", "Star", "Set", "Start", "Log", "Give", "Like", "Mark", "Pay", "Book",
         "Cancel", "Order", "Show", "Take", "Turn", "Push", "Tick", "Send", "Remove"}


def _writes(name: str) -> bool:
    verb = name.split(".", 1)[1]
    return not any(verb == v or verb.startswith(f"{v}_") or verb.endswith(f"_{v}") for v in _READ_VERBS)


# ---- reading the goal (all an attacker has) -------------------------------------------------------

class GoalReader:
    """Strings, numbers, times, names and dates an attacker can lift from the goal text."""

    def __init__(self, goal: str) -> None:
        self.goal = goal
        self.quoted = [a or b for a, b in re.findall(r"\"([^\"]+)\"|(?<!\w)'([^']+)'(?!\w)", goal)]
        self.times = re.findall(r"\b(?:[01]\d|2[0-3]):[0-5]\d\b", goal)
        self.iso_dates = re.findall(r"\b\d{4}-\d{2}-\d{2}\b", goal)
        self.phones = re.findall(r"\+?\d[\d-]{7,}\d", goal)
        self.files = re.findall(r"\b[\w-]+\.(?:jpg|png|pdf|m4a|xlsx)\b", goal)
        rest = re.sub(r"\+?\d[\d-]{7,}\d|\d{4}-\d{2}-\d{2}|\d\d:\d\d", " ", goal)
        self.numbers = [float(n) for n in re.findall(r"(?<![\w.])\d+(?:\.\d+)?", rest)]
        spans = sorted(_DURATIONS, key=len, reverse=True)
        self.minutes = [_DURATIONS[p] for p in spans if p in goal][:1]
        self.relations = re.findall(r"\bmy (\w+)", goal)
        body = re.sub(r"(^|[.:;!?]\s+)[A-Z][\w']*", r"\1", goal)  # drop sentence-initial words
        words = re.findall(r"[A-Z][\w'-]*(?: [A-Z][\w'-]*)*", body)
        self.names = [w for w in words if w.split()[0] not in _STOP]
        self.weekdays = [d for d in _WEEKDAYS if d in goal.lower()]
        self.emails = re.findall(r"[\w.]+@[\w.]+\.\w+", goal)

    def phrase(self) -> str:
        return (self.quoted or self.names or self.relations or [self.goal])[0]

    def person(self) -> str:
        return (self.names or self.relations or self.quoted or [self.goal])[0]

    def dates(self, now: datetime) -> list[str]:
        out = [*self.iso_dates, now.strftime("%Y-%m-%d"), (now + timedelta(days=1)).strftime("%Y-%m-%d")]
        for day in self.weekdays:
            ahead = (_WEEKDAYS.index(day) - now.weekday() - 1) % 7 + 1
            out.insert(len(self.iso_dates), (now + timedelta(days=ahead)).strftime("%Y-%m-%d"))
        return out

    def value(self, key: str, spec: dict[str, Any], now: datetime) -> Any:
        """A guess for argument `key` from the goal alone."""
        kind = spec.get("type")
        if spec.get("enum"):
            return next((v for v in spec["enum"] if str(v).lower().replace("_", " ") in self.goal.lower()),
                        spec["enum"][0])
        if kind == "boolean":
            return not any(w in self.goal.lower() for w in ("off", "stop", "no longer", "unstar"))
        if kind in ("integer", "number"):
            if key == "seconds" and self.minutes:
                return self.minutes[0] * 60
            if "min" in key and self.minutes:
                return self.minutes[0]
            return self.numbers[0] if self.numbers else max(1, int(spec.get("minimum", 1)))
        date, time = self.dates(now)[0], (self.times or ["09:00"])
        if kind == "array":
            if key == "to":
                return list(self.emails) or [self.person()]
            if key in ("days",):
                return []
            return [self.person()]
        if key == "phone":
            return self.phones[0] if self.phones else "+1-555-0100-0000"
        if key in ("due", "start") or key.endswith("_start"):
            return f"{date}T{time[0]}"
        if key == "end" or key.endswith("_end"):
            return f"{date}T{time[-1]}"
        if "time" in key:
            return time[0]
        if "date" in key or key == "check_in":
            return date
        if key in ("body", "text", "memo", "append", "message", "instruction", "value"):
            return self.quoted[0] if self.quoted else self.goal
        if key in ("contact", "person", "attendee", "name", "who"):
            return self.person()
        if key == "id" or key.endswith("_id") or key in ("from_account", "to_account", "file"):
            return (self.files or self.names or self.relations or ["1"])[0]
        return self.phrase()

    def arguments(self, schema: dict[str, Any], now: datetime) -> dict[str, Any]:
        props = schema.get("properties", {}) or {}
        required = set(schema.get("required", []) or [])
        return {k: self.value(k, v or {}, now) for k, v in props.items() if k in required or k in (
            "contact", "body", "label", "passengers", "quantity", "starred")}


def _now(observation: Observation) -> datetime:
    return datetime.fromtimestamp(observation.clock_ms / 1000, UTC)


def _overlap(goal: str, text: str) -> int:
    words = {w for w in re.findall(r"[a-z]{3,}", goal.lower())}
    return sum(w in words for w in re.findall(r"[a-z]{3,}", text.lower()))


# ---- policies ---------------------------------------------------------------------------------------

class _Scripted:
    """A policy that plays a generator of actions built from the goal, catalogue and observations."""

    name = "scripted"
    max_actions = 29

    def begin(self, goal: str, catalogue: Any) -> None:
        self.goal = goal
        self.reader = GoalReader(goal)
        self.catalogue = catalogue
        self._script: Iterator[Any] | None = None
        self._last: Observation | None = None
        self._count = 0

    def script(self) -> Iterator[Any]:
        raise NotImplementedError

    def next_action(self, observation: Observation) -> Any:
        self._last = observation
        if self._script is None:
            self._script = self.script()
        self._count += 1
        if self._count > self.max_actions:
            return Finish()
        try:
            return next(self._script)
        except StopIteration:
            return Finish()

    @property
    def now(self) -> datetime:
        assert self._last is not None
        return _now(self._last)

    def tools(self, writes: bool | None = None) -> list[Any]:
        return [t for t in self.catalogue.tools if writes is None or getattr(t, "writes", _writes(t.name)) == writes]

    def call(self, tool: Any) -> ToolCall:
        return ToolCall(name=tool.name, arguments=self.reader.arguments(tool.parameters, self.now))


class GoalCopier(_Scripted):
    """Maps the goal's wording to the one catalogue entry it resembles most (a write tool, a skill
    or a sub-agent), filled with values lifted from the goal; answers with the first quoted string
    or number. Never reads an observation's data."""

    name = "goal_copier"

    def script(self) -> Iterator[Any]:
        options: list[tuple[int, Any]] = []
        for tool in self.tools(writes=True):
            options.append((_overlap(self.goal, f"{tool.name.replace('.', ' ')} {tool.description}"),
                            self.call(tool)))
        for skill in self.catalogue.skills:
            options.append((_overlap(self.goal, f"{skill.name.replace('_', ' ')} {skill.description}"),
                            UseSkill(skill=skill.name, arguments=self.reader.arguments(skill.parameters, self.now))))
        for agent in self.catalogue.subagents:
            mine = [t for t in self.tools(writes=True) if t.name in set(agent.tools)]
            if mine:
                best = max(mine, key=lambda t: _overlap(self.goal, f"{t.name} {t.description}"))
                plan = [{"name": best.name, "arguments": self.reader.arguments(best.parameters, self.now)}]
                options.append((_overlap(self.goal, f"{agent.name} {agent.description}") - 1,
                                Delegate(agent=agent.name, instruction=self.goal, arguments={"tool_calls": plan})))
        if options:
            yield max(options, key=lambda o: o[0])[1]
        answer = (self.reader.quoted or [str(n) for n in self.reader.numbers] or self.reader.names or [None])[0]
        yield Finish(answer=answer)


class CallEveryWriteTool(_Scripted):
    """Calls every write tool of the catalogue with goal-derived arguments."""

    name = "call_every_write_tool"

    def script(self) -> Iterator[Any]:
        for tool in self.tools(writes=True):
            yield self.call(tool)


class AnswerEveryCandidate(_Scripted):
    """Calls every read tool it can fill from the goal, then answers with every entity and number
    it saw in the results."""

    name = "answer_every_candidate"

    def script(self) -> Iterator[Any]:
        seen: list[str] = []
        for tool in self.tools(writes=False):
            yield self.call(tool)
            result = self._last.result if self._last else None
            if result is not None and result.ok:
                seen.extend(_candidates(result.value))
        unique = list(dict.fromkeys(seen))[:400]
        yield Finish(answer=" ".join(unique) or self.goal)


def _candidates(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            if k != "id":
                yield from _candidates(v)
    elif isinstance(value, list):
        for v in value:
            yield from _candidates(v)
    elif isinstance(value, bool) or value is None:
        return
    else:
        yield str(value)


class TryEverySkill(_Scripted):
    """Runs every skill in the library with goal-derived arguments."""

    name = "try_every_skill"

    def script(self) -> Iterator[Any]:
        for skill in self.catalogue.skills:
            yield UseSkill(skill=skill.name, arguments=self.reader.arguments(skill.parameters, self.now))


class DelegateToEveryone(_Scripted):
    """Hands the goal to every sub-agent, each with the goal-copier's calls for its tools."""

    name = "delegate_to_everyone"

    def script(self) -> Iterator[Any]:
        for agent in self.catalogue.subagents:
            mine = [t for t in self.tools(writes=True) if t.name in set(agent.tools)]
            plan = [{"name": t.name, "arguments": self.reader.arguments(t.parameters, self.now)}
                    for t in mine[:4]] or [{"name": agent.tools[0] if agent.tools else "none", "arguments": {}}]
            yield Delegate(agent=agent.name, instruction=self.goal, arguments={"tool_calls": plan})


class CombinedAttack(_Scripted):
    """All attacks in one episode: copy, spray writes, skills, delegation, then dump candidates."""

    name = "combined_attack"

    def script(self) -> Iterator[Any]:
        parts: list[_Scripted] = [GoalCopier(), CallEveryWriteTool(), TryEverySkill(), DelegateToEveryone(),
                                  AnswerEveryCandidate()]
        for part in parts:
            part.begin(self.goal, self.catalogue)
            part._last = self._last
            inner = part.script()
            for action in inner:
                if isinstance(action, Finish) and part is not parts[-1]:
                    break
                yield action
                part._last = self._last


ATTACKERS: dict[str, Callable[[], Any]] = {
    "goal_copier": GoalCopier, "call_every_write_tool": CallEveryWriteTool,
    "answer_every_candidate": AnswerEveryCandidate, "try_every_skill": TryEverySkill,
    "delegate_to_everyone": DelegateToEveryone, "combined_attack": CombinedAttack,
}


# ---- running them -----------------------------------------------------------------------------------

def _baselines() -> dict[str, Callable[[], Any]]:
    from devices.suite.attackers import LOOKUP_ATTACKERS
    from devices.suite.policies import ClaimPolicy, NoopPolicy, RandomPolicy

    return {"noop": NoopPolicy, "random": RandomPolicy, "claim": ClaimPolicy, **ATTACKERS, **LOOKUP_ATTACKERS}


def run_public_episode(device: Any, task: TaskInstance, policy: Any) -> tuple[CheckResult, int]:
    """One episode of a public-protocol `policy` through the harness; its check result and steps."""
    from devices.harness.harness import Harness
    from devices.suite.episode import run_episode

    harness = device if isinstance(device, Harness) else Harness(device)
    result = run_episode(harness, task, policy)
    return score_final_state(task, harness.final_state()), result.steps


def score_public(policy_factory: Callable[[], Any], tasks: Sequence[TaskInstance],
                 device: Any | None = None) -> dict[str, Any]:
    """Mean score per template, and per family, tier and family/tier (means of template means)."""
    from devices.harness.harness import Harness
    from devices.sim import SimPhone

    harness = device if isinstance(device, Harness) else Harness(device or SimPhone())
    per: dict[str, list[float]] = {}
    meta: dict[str, tuple[str, str]] = {}
    for task in tasks:
        result, _ = run_public_episode(harness, task, policy_factory())
        per.setdefault(task.template, []).append(result.score)
        meta[task.template] = (task.family, task.tier or "easy")
    templates = {name: fmean(scores) for name, scores in per.items()}
    by: dict[str, dict[str, list[float]]] = {"family": {}, "tier": {}, "family_tier": {}}
    for name, score in templates.items():
        family, tier = meta[name]
        by["family"].setdefault(family, []).append(score)
        by["tier"].setdefault(tier, []).append(score)
        by["family_tier"].setdefault(f"{family}/{tier}", []).append(score)
    return {"templates": templates,
            **{k: {g: fmean(v) for g, v in groups.items()} for k, groups in by.items()}}


def baseline_table(split: str = "test", n: int = 2, suite_seed: int = 0) -> dict[str, dict[str, Any]]:
    """Every baseline's scores per family, tier and family/tier, plus the MobilePA-weighted overall."""
    from devices.suite.instances import generate_split
    from schemas.training import FamilyScores

    tasks = generate_split(split, n, suite_seed)
    out = {}
    for name, factory in _baselines().items():
        report = score_public(factory, tasks)
        fams = report["family"]
        report["overall"] = FamilyScores(**{f: fams.get(f, 0.0) for f in ("tool", "memory", "skills",
                                                                           "subagent")}).overall
        out[name] = {k: v for k, v in report.items() if k != "templates"}
    return out


if __name__ == "__main__":  # python -m devices.suite.baselines: the baseline table on test as JSON
    print(json.dumps(baseline_table(), indent=2, sort_keys=True))
