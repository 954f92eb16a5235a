"""Errands ask for two or three things in one goal: every part is needed, none may be skipped."""

from __future__ import annotations

from typing import Any

import pytest

from devices.harness.harness import Harness
from devices.sim import SimPhone
from devices.suite.registry import all_templates
from devices.suite.scoring import score_final_state
from devices.suite.stats import oracle_run
from devices.suite.templates.family_errands import (
    FamilyErrand,
    _family_params,
    _tool_params,
    family_errand,
)
from devices.suite.templates.tool_errands import ERRANDS, Errand, _split, errand
from schemas.actions import Finish

ERRAND_TEMPLATES = [t for t in all_templates() if isinstance(t, Errand)]


def _run_parts(template: Errand, keep: set[int], split: str, i: int) -> float:
    """Score of an agent that does only the parts numbered in `keep` (their oracle steps), then finishes."""
    harness = Harness(SimPhone())
    task = template.generate(split, i, 0)
    observation = harness.reset(task)
    last: list[Any] = [observation]
    for n, (tag, part) in enumerate(zip("abc", template.parts, strict=False)):
        if n not in keep:
            continue
        for action in part.oracle(_split(dict(task.params), tag), lambda: last[0]):
            if isinstance(action, Finish):
                break
            last[0] = harness.act(action)
    harness.act(Finish())
    return score_final_state(task, harness.final_state()).score


def test_errands_are_registered_and_deep() -> None:
    assert len(ERRAND_TEMPLATES) == len(ERRANDS) >= 20
    for template in ERRAND_TEMPLATES:
        assert template.tier == "hard" and len(template.parts) in (2, 3)
        assert template.test_only == any(p.test_only for p in template.parts), template.name


@pytest.mark.parametrize("template", ERRAND_TEMPLATES[::4], ids=lambda t: t.name)
def test_doing_only_some_parts_scores_zero(template: Errand) -> None:
    split = template.splits()[0]
    assert oracle_run(SimPhone(), template, split, 0, 0)[1] == 1.0
    n = len(template.parts)
    for keep in [{k for k in range(n) if k != skip} for skip in range(n)]:
        assert _run_parts(template, keep, split, 0) == 0.0, keep


def test_parts_sharing_an_app_are_refused() -> None:
    with pytest.raises(ValueError, match="share apps"):
        errand("text_relation", "new_number_relation")


def test_the_goal_states_every_part() -> None:
    template = ERRAND_TEMPLATES[0]
    task = template.generate(template.splits()[0], 0, 0)
    for tag, part in zip("abc", template.parts, strict=False):
        goal = part.goal(_split(dict(task.params), tag))
        assert goal[1:] in task.goal


# ---- family errands: a memory, skill or sub-agent part with a tool part -------------------------

FAMILY_ERRAND_TEMPLATES = [t for t in all_templates() if isinstance(t, FamilyErrand)]


def _run_family_parts(template: FamilyErrand, tool: bool, family: bool) -> float:
    harness = Harness(SimPhone())
    task = template.generate(template.splits()[0], 0, 0)
    last: list[Any] = [harness.reset(task)]
    scripts = ([template.tool.oracle(_tool_params(dict(task.params)), lambda: last[0])] if tool else []) + (
        [template.part.oracle(_family_params(dict(task.params)), lambda: last[0])] if family else [])
    for script in scripts:
        for action in script:
            if isinstance(action, Finish) and action.answer is None:
                break
            last[0] = harness.act(action)
            if isinstance(action, Finish):
                break
    if not harness.final_state().get("goal_status"):
        harness.act(Finish())
    return score_final_state(task, harness.final_state()).score


def test_family_errands_cover_every_family_and_keep_its_checker() -> None:
    assert {t.family for t in FAMILY_ERRAND_TEMPLATES} == {"memory", "skills", "subagent"}
    for template in FAMILY_ERRAND_TEMPLATES:
        assert template.checker == template.part.checker and template.family == template.part.family
        assert template.test_only == (template.tool.test_only or template.part.test_only)
        assert not set(template.tool.apps) & set(template.part.apps)


@pytest.mark.parametrize("template", FAMILY_ERRAND_TEMPLATES[::3], ids=lambda t: t.name)
def test_a_family_errand_needs_both_parts(template: FamilyErrand) -> None:
    assert _run_family_parts(template, tool=True, family=True) == 1.0
    assert _run_family_parts(template, tool=True, family=False) == 0.0
    assert _run_family_parts(template, tool=False, family=True) == 0.0


def test_a_family_errand_refuses_parts_sharing_an_app() -> None:
    with pytest.raises(ValueError, match="share apps"):
        family_errand("text_relation", "mem_text_relation")
