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
from collections.abc import Callable, Iterator, Sequence
from statistics import fmean
from typing import Any

from devices.protocol import TaskInstance
from devices.suite.diff import CheckResult
from devices.suite.scoring import score_final_state
from devices.suite.scripted import GoalReader, _now, _overlap, _Scripted  # noqa: F401 (_now: kept importable)
from schemas.actions import Delegate, Finish, UseSkill

__all__ = [
    "ATTACKERS",
    "AnswerEveryCandidate",
    "CallEveryWriteTool",
    "CombinedAttack",
    "DelegateToEveryone",
    "GoalCopier",
    "GoalReader",
    "TryEverySkill",
    "baseline_table",
    "run_public_episode",
    "score_public",
]

logger = logging.getLogger(__name__)

# ---- policies ---------------------------------------------------------------------------------------

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
