"""Errands ask for two or three things in one goal: every part is needed, none may be skipped."""

from __future__ import annotations

from typing import Any

import pytest

from devices.harness.harness import Harness
from devices.sim import SimPhone
from devices.suite.registry import all_templates
from devices.suite.scoring import score_final_state
from devices.suite.stats import oracle_run
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
    assert len(ERRAND_TEMPLATES) == len(ERRANDS) >= 30
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
