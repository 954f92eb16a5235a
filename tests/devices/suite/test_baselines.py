"""Baselines kept as tests: do-nothing agents and attackers written against the public protocol.

Families are held to the bound once all their templates score by whole-state diff
(`Template.expect`); families still on legacy checkers are reported, not bounded, until their
rebuild lands (the memory, skills and sub-agent rebuild is on the `harness` branch).
"""

from __future__ import annotations

import pytest

from devices.harness.harness import Harness
from devices.sim import SimPhone
from devices.suite.baselines import (
    ATTACKERS,
    CallEveryWriteTool,
    CombinedAttack,
    GoalCopier,
    run_public_episode,
    score_public,
)
from devices.suite.evaluate import evaluate
from devices.suite.instances import generate_split
from devices.suite.policies import ClaimPolicy, NoopPolicy, RandomPolicy
from devices.suite.registry import FAMILIES, all_templates, get_template
from devices.suite.template import Template
from schemas.training import FamilyScores

# Instances per template on test: enough to see a template an attacker solves.
N = 2


def _diff_checked() -> set[str]:
    """Families whose every template scores by the whole-state diff."""
    return {f for f in FAMILIES
            if all(type(t).expect is not Template.expect for t in all_templates() if t.family == f)}


@pytest.fixture(scope="module")
def tasks() -> list:
    return generate_split("test", N, suite_seed=0)


@pytest.fixture(scope="module")
def phone() -> Harness:
    return Harness(SimPhone())


def _bounded(report: dict, bound: float) -> list[str]:
    checked = _diff_checked()
    assert "tool" in checked
    over = [f"{f}={report['family'][f]:.3f}" for f in checked if report["family"].get(f, 0.0) > bound]
    # the MobilePA-weighted overall, renormalised over the families held to the bound
    weights = {f: (report["family"].get(f, 0.0) if f in checked else 0.0) for f in FAMILIES}
    full = FamilyScores(**{f: 1.0 if f in checked else 0.0 for f in FAMILIES}).overall
    overall = FamilyScores(**weights).overall / full
    if overall > bound:
        over.append(f"overall={overall:.3f}")
    return over


@pytest.mark.parametrize("factory", [NoopPolicy, RandomPolicy, ClaimPolicy], ids=["noop", "random", "claim"])
def test_do_nothing_random_and_claiming_agents_stay_at_or_below_one_percent(factory, tasks, phone) -> None:
    report = score_public(factory, tasks, phone)
    assert not _bounded(report, 0.01), report["family"]


@pytest.mark.parametrize("name", sorted(ATTACKERS))
def test_every_attacker_stays_at_or_below_ten_percent_on_test(name, tasks, phone) -> None:
    report = score_public(ATTACKERS[name], tasks, phone)
    assert not _bounded(report, 0.10), (report["family"], sorted(
        (v, k) for k, v in report["templates"].items() if v)[-5:])


def test_the_goal_copier_really_solves_a_copyable_task(phone) -> None:
    # Guards the bound above: the copier is a working attacker, not a no-op.
    task = get_template("timer_for").generate("test", 0, 0)
    result, _ = run_public_episode(phone, task, GoalCopier())
    assert result.score == 1.0


def test_the_write_sprayer_really_writes(phone) -> None:
    task = get_template("text_relation").generate("test", 0, 0)
    result, steps = run_public_episode(phone, task, CallEveryWriteTool())
    assert steps > 3 and result.violations  # it changed the phone, and the diff saw it
    assert result.score == 0.0


def test_the_combined_attack_scores_near_zero_through_module_class_too() -> None:
    report = evaluate("devices.suite.baselines:CombinedAttack", "test", 1, 0, progress=False)
    assert report.policy == CombinedAttack.name
    assert report.scores.tool <= 0.10
