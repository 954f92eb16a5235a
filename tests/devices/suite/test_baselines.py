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


_REPORTS: dict[str, dict] = {}


def _report(name: str, factory, tasks, phone) -> dict:
    if name not in _REPORTS:
        _REPORTS[name] = score_public(factory, tasks, phone)
    return _REPORTS[name]


def _overall(report: dict) -> float:
    """The MobilePA-weighted overall over the families held to the bound."""
    checked = _diff_checked()
    weights = {f: (report["family"].get(f, 0.0) if f in checked else 0.0) for f in FAMILIES}
    full = FamilyScores(**{f: 1.0 if f in checked else 0.0 for f in FAMILIES}).overall
    return FamilyScores(**weights).overall / full


@pytest.mark.parametrize("factory", [NoopPolicy, RandomPolicy, ClaimPolicy], ids=["noop", "random", "claim"])
def test_do_nothing_random_and_claiming_agents_stay_at_or_below_one_percent(factory, tasks, phone) -> None:
    # overall at most 0.01 (the issue's bar); no family above the attackers' 0.10 either
    report = score_public(factory, tasks, phone)
    assert "tool" in _diff_checked()
    assert _overall(report) <= 0.01, report["family"]
    assert all(report["family"].get(f, 0.0) <= 0.10 for f in _diff_checked()), report["family"]


@pytest.mark.parametrize("name", sorted(ATTACKERS))
def test_every_attacker_stays_at_or_below_ten_percent_overall_on_test(name, tasks, phone) -> None:
    assert _overall(_report(name, ATTACKERS[name], tasks, phone)) <= 0.10


# Known gaps, kept visible as strict xfails (a closed gap fails the test, so its mark goes).
# None open: the skill goals that stated every argument (skill_bedtime, skill_block_time,
# skill_focus, skill_welcome_contact) now need their arguments looked up first.
_KNOWN_OVER: set[tuple[str, str]] = set()
_CASES = [pytest.param(name, family, marks=pytest.mark.xfail(
              strict=True, reason="easy skill goals state every skill argument"))
          if (name, family) in _KNOWN_OVER else (name, family)
          for name in sorted(ATTACKERS) for family in FAMILIES]


@pytest.mark.parametrize(("name", "family"), _CASES)
def test_every_attacker_stays_at_or_below_ten_percent_on_every_family(name, family, tasks, phone) -> None:
    if family not in _diff_checked():
        pytest.skip(f"{family} still scores with legacy checkers")
    report = _report(name, ATTACKERS[name], tasks, phone)
    assert report["family"].get(family, 0.0) <= 0.10, sorted(
        (v, k) for k, v in report["templates"].items() if v)[-5:]


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
