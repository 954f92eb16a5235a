"""Tasks as the flywheel moves them: instance <-> `task.proposed`, composed tasks, the oracle
and the checker of any task (template or constructed), and the device's final state as JSON.

A constructed task composes templates: its `template` is `composed:A+B`, its params are
`{"parts": [{"template": A, "params": {...}}, ...]}`; its oracle runs the parts' oracles in
order and its checker is the minimum of the parts' checkers on the one final state.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from devices.protocol import TaskInstance
from devices.sim.state import LogEntry, SimSnapshot, SimState
from devices.suite.registry import get_template
from devices.suite.template import Observe
from schemas.actions import Finish
from schemas.observations import Observation
from schemas.tasks import Origin, TaskProposed, Tier

__all__ = [
    "COMPOSED_PREFIX",
    "ScriptedOracle",
    "composed_name",
    "final_state_json",
    "instance_of",
    "oracle_actions",
    "part_templates",
    "score_final_state",
    "score_state",
    "state_from_json",
    "task_event",
]

logger = logging.getLogger(__name__)

COMPOSED_PREFIX = "composed:"


def composed_name(templates: list[str]) -> str:
    return COMPOSED_PREFIX + "+".join(templates)


def part_templates(task: TaskInstance) -> list[str]:
    """The templates whose checkers judge `task` (one, or the parts of a composed task)."""
    if task.template.startswith(COMPOSED_PREFIX):
        return [str(part["template"]) for part in task.params["parts"]]  # type: ignore[index]
    return [task.template]


def _parts(task: TaskInstance) -> list[tuple[str, dict[str, Any]]]:
    if task.template.startswith(COMPOSED_PREFIX):
        return [(str(p["template"]), dict(p["params"]))  # type: ignore[index, arg-type]
                for p in task.params["parts"]]  # type: ignore[union-attr]
    return [(task.template, dict(task.params))]


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
    return get_template(event.template).generate(event.split, _position(event), suite_seed)


def _position(event: TaskProposed) -> int:
    from devices.suite.seeding import instance_index

    for i in range(event.index + 1):
        if instance_index(event.split, i) == event.index:
            return i
    raise ValueError(f"task {event.task_id} has an index that no position of {event.split} gives")


# ---- the oracle of any task ------------------------------------------------------------------

class ScriptedOracle:
    """The scripted expert for any task (template or composed); acts only on observations."""

    name = "oracle"

    def __init__(self) -> None:
        self._script: Iterator[Any] | None = None
        self._last: Observation | None = None

    def begin(self, task: TaskInstance, phone: Any = None) -> None:
        self._last = None
        self._script = _chain(_parts(task), self._observe)

    def _observe(self) -> Observation:
        if self._last is None:
            raise RuntimeError("the oracle asked for an observation before the episode started")
        return self._last

    def next_action(self, observation: Observation) -> Any:
        self._last = observation
        assert self._script is not None, "begin() first"
        try:
            return next(self._script)
        except StopIteration:
            return Finish()


def _chain(parts: list[tuple[str, dict[str, Any]]], observe: Observe) -> Iterator[Any]:
    for index, (name, params) in enumerate(parts):
        for action in get_template(name).oracle(params, observe):
            # A part's own finish would end a composed episode before the next part.
            if isinstance(action, Finish) and index < len(parts) - 1:
                break
            yield action


def oracle_actions(task: TaskInstance, phone: Any) -> tuple[list[Any], float]:
    """Runs the oracle on `phone` (reset to `task`): its actions and the score it reached."""
    observation = phone.reset(task)
    oracle = ScriptedOracle()
    oracle.begin(task, phone)
    actions = []
    while len(actions) < task.max_steps and not observation.done:
        action = oracle.next_action(observation)
        actions.append(action)
        observation = phone.act(action)
    return actions, score_state(task, phone.state)


# ---- scoring from state ----------------------------------------------------------------------

def score_state(task: TaskInstance, state: Any) -> float:
    """The task's checker on a live state: the minimum over its parts, in [0, 1]."""
    scores = []
    for name, params in _parts(task):
        score = float(get_template(name).is_successful(state, params))
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"checker of {name} returned {score}, outside [0, 1]")
        scores.append(score)
    return min(scores)


def final_state_json(state: SimState) -> dict[str, Any]:
    """The device's final state in the contract's JSON shape (CONTRACT-6 item 3)."""
    tables: dict[str, dict[str, dict[str, Any]]] = {}
    for key, rows in state._tables.items():
        app, table = key.split(".", 1)
        tables.setdefault(app, {})[table] = {row_id: dict(row) for row_id, row in rows.items()}
    return {"tables": tables, "settings": state.settings, "memory": state.memory,
            "log": [entry.to_dict() for entry in state.log], "answer": state.answer,
            "goal_status": state.goal_status, "clock_ms": state.clock_ms}


def state_from_json(data: dict[str, Any]) -> SimState:
    """A read-only SimState rebuilt from `final_state_json` output, for the checkers."""
    tables = {f"{app}.{table}": {str(k): dict(v) for k, v in rows.items()}
              for app, by_table in data.get("tables", {}).items()
              for table, rows in by_table.items()}
    log = tuple(LogEntry(**entry) for entry in data.get("log", []))
    snap = SimSnapshot(tables=tables, counters={k: len(v) for k, v in tables.items()},
                       settings=dict(data.get("settings", {})), memory=dict(data.get("memory", {})),
                       user_answers={}, log=log, faults=(), answer=data.get("answer"),
                       goal_status=data.get("goal_status"), clock_ms=int(data.get("clock_ms", 0)),
                       step=len(log), done=True, max_steps=max(1, len(log)))
    return SimState.thaw(snap)


def score_final_state(task: TaskInstance, final_state: dict[str, Any]) -> float:
    """The task's checker on the stored final state (never on the agent's claim)."""
    return score_state(task, state_from_json(final_state))
