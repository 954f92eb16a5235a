"""Tasks as the flywheel moves them: instance <-> `task.proposed`, and the oracle of any task
(template or constructed), run through the harness.

A constructed task composes templates (`devices.suite.scoring.parts_of`); its oracle runs the
parts' oracles in order. Every task is scored by the one checker entry point,
`devices.suite.scoring.score_final_state`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from devices.harness.harness import Harness
from devices.kit.final_state import StateView
from devices.protocol import TaskInstance
from devices.suite.policies import ScriptOracle
from devices.suite.registry import get_template
from devices.suite.scoring import parts_of, score_final_state
from devices.suite.template import Observe
from schemas.actions import Finish
from schemas.tasks import Origin, TaskProposed, Tier

__all__ = [
    "AlreadySolved",
    "ScriptedOracle",
    "blob_dir",
    "instance_of",
    "new_harness",
    "oracle_actions",
    "oracle_check",
    "solved_before_acting",
    "task_event",
    "task_params_for",
]

logger = logging.getLogger(__name__)


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

    #: In-process and bounded: a rollout calls it without a timeout thread.
    bounded_calls = True

    def _new_script(self, task: TaskInstance) -> Iterator[Any]:
        return _chain(parts_of(task), self._observe)


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
    from devices.harness.episode import play

    played = play(harness, task, ScriptedOracle()).checked()  # play prepares the privileged oracle
    return played.actions, score_final_state(task, harness.final_state()).score


class AlreadySolved(Exception):
    """The state before anyone acts already scores above 0: the task asks for nothing."""

    def __init__(self, score: float) -> None:
        super().__init__(f"the untouched state already scores {score:.2f}")
        self.score = score


def oracle_check(task: TaskInstance, harness: Harness) -> tuple[list[Any], float]:
    """One oracle run that checks a task both ways: the state before the oracle's first action
    must score 0 (else AlreadySolved, and the run stops there), and the oracle's actions and
    final score are returned (1.0 for a solvable task): one reset serves both checks. A device
    error is raised, as in `oracle_actions`."""
    from devices.harness.episode import play
    from devices.suite.scoring import initial_view

    before = initial_view(task)  # the start state, rebuilt once for both scores

    def before_first(index: int, _observation: Any, _action: Any) -> None:
        if index == 0:
            _solved_already(task, harness.final_state(copy=False), before)

    played = play(harness, task, ScriptedOracle(), on_step=before_first).checked()
    if not played.actions:  # nothing done: the final state is the untouched one
        _solved_already(task, harness.final_state(copy=False), before)
    # Scored at once and thrown away: the live rows need no copy.
    return played.actions, score_final_state(task, harness.final_state(copy=False), before=before).score


def solved_before_acting(task: TaskInstance) -> None:
    """The checks of a task that need no simulator run: its initial state loads (else
    InitialStateError, or the LookupError/ValueError of colliding rows) and does not already
    score above 0 (else AlreadySolved). The start state is built as a reset builds it
    (`initial_state_of`) and scored as the oracle check scores the state before its first action."""
    from devices.sim.phone import initial_state_of

    start = initial_state_of(task).to_final_json(copy=False)  # built once: the before and the after
    _solved_already(task, start, StateView.from_json(start))


def _solved_already(task: TaskInstance, state: dict[str, Any], before: StateView) -> None:
    """Raises AlreadySolved when `state`, untouched by the agent, already scores above 0."""
    score = score_final_state(task, state, before=before).score
    if score != 0.0:
        raise AlreadySolved(score)


def blob_dir(data_dir: str | Path) -> Path:
    """Where episodes' final states live: `<data dir>/blobs` (the rollout writes, the verifier
    and the curator read)."""
    return Path(data_dir) / "blobs"


def task_params_for(task: TaskInstance) -> dict[str, Any]:
    """What a rollout puts in ActionRequested.task_params so any runner can rebuild `task`."""
    return task.model_dump(mode="json")
