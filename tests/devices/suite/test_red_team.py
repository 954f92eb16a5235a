"""The red-team gate: every attacker the project ships — goal copiers, sprayers, and the
lookup-first heuristics that read before they act — scores at most 0.05 overall (MobilePA
weights) and at most 0.10 in any family × tier cell on test. When one scores more, the task or
its checker is fixed, never the attacker."""

from __future__ import annotations

import pytest

from devices.harness.harness import Harness
from devices.sim import SimPhone
from devices.suite.attackers import LOOKUP_ATTACKERS, MemoryKeyMatcher, SkillMatcher
from devices.suite.baselines import ATTACKERS, run_public_episode, score_public
from devices.suite.instances import generate_split
from devices.suite.registry import FAMILIES, get_template
from schemas.training import FamilyScores

N = 2  # instances per template on test
OVERALL_BAR = 0.05
CELL_BAR = 0.10
ALL = {**ATTACKERS, **LOOKUP_ATTACKERS}


@pytest.fixture(scope="module")
def reports() -> dict[str, dict]:
    tasks = generate_split("test", N, suite_seed=0)
    phone = Harness(SimPhone())
    return {name: score_public(factory, tasks, phone) for name, factory in ALL.items()}


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_attacker_stays_under_the_red_team_bar(name: str, reports: dict[str, dict]) -> None:
    report = reports[name]
    overall = FamilyScores(**{f: report["family"].get(f, 0.0) for f in FAMILIES}).overall
    assert overall <= OVERALL_BAR, (overall, report["family"])
    over = {cell: score for cell, score in report["family_tier"].items() if score > CELL_BAR}
    top = sorted(((v, k) for k, v in report["templates"].items() if v), reverse=True)[:5]
    assert not over, (over, top)


def test_the_lookup_attackers_are_working_attackers() -> None:
    # Guards the bar: each really reads and acts, so staying under it means something.
    phone = Harness(SimPhone())
    task = get_template("mem_locker_code").generate("test", 0, 0)
    result, steps = run_public_episode(phone, task, MemoryKeyMatcher())
    assert result.score == 1.0  # a one-lookup memory task is what key matching can do
    task = get_template("text_relation").generate("test", 0, 0)
    result, steps = run_public_episode(phone, task, SkillMatcher())
    assert steps >= 3  # it searched before it acted
    task = get_template("timer_for").generate("test", 0, 0)
    result, _ = run_public_episode(phone, task, LOOKUP_ATTACKERS["lookup_first"]())
    assert result.score == 1.0  # the goal states every argument: copying it is solving it
