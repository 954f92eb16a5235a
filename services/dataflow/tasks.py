"""Tasks as the flywheel moves them: instance <-> `task.proposed`, composed tasks, and the
oracle and checker of any task (template or constructed), run through the harness.

A constructed task composes templates: its `template` is `composed:A+B`, its params are
`{"parts": [{"template": A, "params": {...}}, ...]}`; its oracle runs the parts' oracles in
order, and its checker diffs the one final state against the parts' expected changes
together (so neither part's writes count as the other's extra writes).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from devices.harness.harness import Harness
from devices.protocol import TaskInstance
from devices.suite.diff import CheckResult, check_change
from devices.suite.policies import ScriptOracle
from devices.suite.registry import get_template
from devices.suite.scoring import initial_view
from devices.suite.scoring import score_final_state as score_template
from devices.suite.state_view import StateView
from devices.suite.template import Observe
from schemas.actions import Finish
from schemas.tasks import Origin, TaskProposed, Tier

__all__ = [
    "COMPOSED_PREFIX",
    "ScriptedOracle",
    "blob_dir",
    "check_final_state",
    "composed_name",
    "instance_of",
    "new_harness",
    "oracle_actions",
    "part_templates",
    "score_final_state",
    "task_event",
    "task_params_for",
    "untouched_score",
]

logger = logging.getLogger(__name__)

COMPOSED_PREFIX = "composed:"


def composed_name(templates: list[str]) -> str:
    return COMPOSED_PREFIX + "+".join(templates)


def _parts(task: TaskInstance) -> list[tuple[str, dict[str, Any]]]:
    if task.template.startswith(COMPOSED_PREFIX):
        return [(str(p["template"]), dict(p["params"]))  # type: ignore[index, arg-type]
                for p in task.params["parts"]]  # type: ignore[union-attr]
    return [(task.template, dict(task.params))]


def part_templates(task: TaskInstance) -> list[str]:
    """The templates whose checkers judge `task` (one, or the parts of a composed task)."""
    return [name for name, _ in _parts(task)]


def task_event(task: TaskInstance, *, tier: Tier, origin: Origin = "template",
               parents: list[str] | None = None, priority: float = 1.0, **envelope: Any,
               ) -> TaskProposed:
    """The `task.proposed` event carrying `task` whole (so no registry look-up is needed)."""
    return TaskProposed(
        task_id=task.task_id, template=task.template, family=task.family, split=task.split,
        index=task.index, params=task.params, goal=task.goal, priority=priority, tier=tier,
        origin=origin, parents=parents or [], instance=task.model_dump(mode="json"), **envelope)


def instance_of(event: TaskProposed, suite_seed: int = 0) -> TaskInstance:
    """The TaskInstance of a `task.proposed` (its embedded instance, else regenerated)."""
    if event.instance is not None:
        return TaskInstance.model_validate(event.instance)
    from devices.suite.seeding import instance_index

    template = get_template(event.template)
    for i in range(event.index + 1):
        if instance_index(event.split, i) == event.index:
            return template.generate(event.split, i, suite_seed)
    raise ValueError(f"task {event.task_id} has an index that no position of {event.split} gives")


def new_harness(device_id: str = "sim-0") -> Harness:
    """A SimPhone inside the default harness: what the rollout, verifier and curator replay on."""
    from devices.sim import SimPhone

    return Harness(SimPhone(device_id))


# ---- the oracle of any task ------------------------------------------------------------------

class ScriptedOracle(ScriptOracle):
    """The scripted expert for any task (template or composed). Privileged like the suite's
    OraclePolicy: `prepare(task)` before `begin`; it reads ids and values from observations."""

    def _new_script(self, task: TaskInstance) -> Iterator[Any]:
        return _chain(_parts(task), self._observe)


def _chain(parts: list[tuple[str, dict[str, Any]]], observe: Observe) -> Iterator[Any]:
    for index, (name, params) in enumerate(parts):
        for action in get_template(name).oracle(params, observe):
            # A part's own finish would end a composed episode before the next part.
            if isinstance(action, Finish) and index < len(parts) - 1:
                break
            yield action


def oracle_actions(task: TaskInstance, harness: Harness) -> tuple[list[Any], float]:
    """Runs the oracle through `harness` (reset to `task`, the one episode loop): its actions and
    the score. A device error is raised (the harness is the caller's simulator)."""
    from devices.suite.episode import play

    oracle = ScriptedOracle()
    oracle.prepare(task)  # the privileged oracle is prepared here; `play` prepares only the suite's
    played = play(harness, task, oracle)
    if played.error is not None:
        raise played.error
    return played.actions, score_final_state(task, harness.final_state())


def untouched_score(task: TaskInstance, harness: Harness) -> float:
    """The score of the state right after reset, before anyone acts (must be 0)."""
    harness.reset(task)
    return score_final_state(task, harness.final_state())


# ---- scoring from the stored final state -----------------------------------------------------

def check_final_state(task: TaskInstance, final_state: dict[str, Any]) -> CheckResult:
    """The task's checker on the final-state JSON (never the agent's claim)."""
    parts = _parts(task)
    if len(parts) == 1 and parts[0][0] == task.template:
        return score_template(task, final_state)
    before, after = initial_view(task), StateView.from_json(final_state)
    templates = [(get_template(name), params) for name, params in parts]
    expected = [(t, t.expect(params, before)) for t, params in templates]
    if all(e is not None for _, e in expected):
        return check_change(before, after, [x for _, e in expected for x in e or []],
                            memory=any(t.diff_memory for t, _ in templates))
    # Parts with legacy checkers: each must pass on its own.
    results = [t.check(params, before, after) for t, params in templates]
    score = min(r.score for r in results)
    return CheckResult(score=score, progress=sum(r.progress for r in results) / len(results),
                       subgoals=[g for r in results for g in r.subgoals],
                       violations=[v for r in results for v in r.violations])


def score_final_state(task: TaskInstance, final_state: dict[str, Any]) -> float:
    return check_final_state(task, final_state).score


def blob_dir(data_dir: str | Path) -> Path:
    """Where episodes' final states live: `<data dir>/blobs` (the rollout writes, the verifier
    and the curator read)."""
    return Path(data_dir) / "blobs"


def task_params_for(task: TaskInstance) -> dict[str, Any]:
    """What a rollout puts in ActionRequested.task_params so any runner can rebuild `task`."""
    return task.model_dump(mode="json")
