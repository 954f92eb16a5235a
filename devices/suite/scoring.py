"""Scoring from (task, final-state JSON): the one checker entry point of the project (the
verifier, the evaluator, the trainer, the evolver's gate and the rescorer all call it).

The initial state is recomputed from the task (the default world plus the task's
initial_state overlay), so a stored final state is all that is needed to score an episode.

A composed task (the generator's constructed tasks) chains templates: its `template` is
`composed:A+B`, its params are `{"parts": [{"template": A, "params": {...}}, ...]}`; it is judged
by diffing the one final state against the parts' expected changes together (so neither part's
writes count as the other's extra writes).
"""

from __future__ import annotations

import logging
from typing import Any

from devices.protocol import TaskInstance
from devices.suite.diff import CheckResult, check_change
from devices.suite.registry import get_template
from devices.suite.state_view import StateView

__all__ = ["COMPOSED_PREFIX", "CheckResult", "composed_name", "initial_view", "part_templates", "parts_of",
           "score_final_state"]

#: A composed task's template name starts with this, then its parts joined by "+".
COMPOSED_PREFIX = "composed:"

logger = logging.getLogger(__name__)


def initial_view(task: TaskInstance, world_seed: int | None = None) -> StateView:
    """The state right after reset(task), as a StateView."""
    from devices.sim.phone import initial_state_of  # the sandbox rebuilds the start state

    return StateView.from_json(initial_state_of(task, world_seed).to_final_json(copy=False))


def composed_name(templates: list[str]) -> str:
    """The template name of a task composed of `templates`, in order."""
    return COMPOSED_PREFIX + "+".join(templates)


def parts_of(task: TaskInstance) -> list[tuple[str, dict[str, Any]]]:
    """(template, params) of each part: the task itself, or the parts of a composed task."""
    if task.template.startswith(COMPOSED_PREFIX):
        return [(str(p["template"]), dict(p["params"]))  # type: ignore[index, arg-type]
                for p in task.params["parts"]]  # type: ignore[union-attr]
    return [(task.template, dict(task.params))]


def part_templates(task: TaskInstance) -> list[str]:
    """The templates whose checkers judge `task` (one, or the parts of a composed task)."""
    return [name for name, _ in parts_of(task)]


def score_final_state(task: TaskInstance, final_state: dict[str, Any],
                      world_seed: int | None = None, *, before: StateView | None = None) -> CheckResult:
    """The task's checker on the episode's final state (contract §3), never the agent's claim:
    the template's own checker, or for a composed task the parts' expected changes together.
    `before` is `initial_view(task, world_seed)` when the caller already has it (one task
    scored twice)."""
    before = before if before is not None else initial_view(task, world_seed)
    after = StateView.from_json(final_state)
    if not task.template.startswith(COMPOSED_PREFIX):
        result = get_template(task.template).check(dict(task.params), before, after)
        if not 0.0 <= result.score <= 1.0:
            raise ValueError(f"checker of {task.template} returned {result.score}, outside [0, 1]")
        return result
    templates = [(get_template(name), params) for name, params in parts_of(task)]
    expected = [(t, t.expect(params, before)) for t, params in templates]
    if all(e is not None for _, e in expected):
        return check_change(before, after, [x for _, e in expected for x in e or []],
                            memory=any(t.diff_memory for t, _ in templates))
    # Parts with legacy checkers: each must pass on its own.
    results = [t.check(params, before, after) for t, params in templates]
    return CheckResult(score=min(r.score for r in results),
                       progress=sum(r.progress for r in results) / len(results),
                       subgoals=[g for r in results for g in r.subgoals],
                       violations=[v for r in results for v in r.violations])
