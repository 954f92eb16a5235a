"""The episode loop: one task instance through the harness, step by step, then its score.

`play` is the loop (reset, begin, act until `max_steps` or done) with two hooks: `on_step(index,
observation, action)`, called after the policy chose an action and before the harness runs it
(what recording, teacher forcing and slips need), and `after_step(index, action, observation)`
with what the phone answered (what a recorded episode keeps); `run_episode` plays and scores the
final state. The policy sees the goal, the harness's catalogue and observations only; the oracle
alone is prepared with the task (it is the suite's own privileged expert; a service's scripted
oracle is prepared by its caller before `play`).

Every in-process episode of the suite, the evolver's gate, the generator's oracle check and the
curator's corrections runs here; `tests/devices/suite/test_one_episode_loop.py` names the few
loops that may stand apart (the rollout's guarded loop, batched evaluation, the phone's, the
fingerprint's reference loop) and fails on any new one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from devices.harness.harness import Harness
from devices.harness.spec import HarnessSpec
from devices.protocol import DeviceError, TaskInstance
from devices.suite.policies import OraclePolicy, Policy
from devices.suite.scoring import score_final_state

__all__ = ["AfterStep", "Alongside", "Call", "EpisodeResult", "Played", "StepHook", "play", "run_episode",
           "score_state"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class EpisodeResult:
    """What one episode scored, how it ended, and under which harness."""

    task_id: str
    template: str
    family: str
    score: float
    steps: int
    finished: bool
    harness_version: str
    progress: float = 0.0
    fault: str | None = None  # the device error that ended the episode early (an environment fault)


def score_state(task: TaskInstance, state: Any) -> float:
    """The template's checker on a state (a Harness, or anything with `to_final_json()`)."""
    final = state.final_state() if isinstance(state, Harness) else state.to_final_json()
    return score_final_state(task, final).score


@dataclass(frozen=True)
class Played:
    """What `play` did: the actions taken, the last observation, and how it ended."""

    harness: Harness
    actions: list[Any]
    observation: Any
    finished: bool
    error: DeviceError | None = None


StepHook = Callable[[int, Any, Any], None]
#: `after_step(index, action, observation)`: the step's action and what the phone answered.
AfterStep = Callable[[int, Any, Any], None]
#: `call(fn, *args)`: how `play` calls the policy or the device (the rollout puts its per-call
#: timeout and busy-time clock here); the default calls `fn(*args)`.
Call = Callable[..., Any]


def _direct(fn: Callable[..., Any], *args: Any) -> Any:
    return fn(*args)


class Alongside:
    """`actor` plays the episode; `follower` (a policy being measured or questioned) is begun on
    the same goal and catalogue, so a step hook can ask it about each of the actor's steps."""

    def __init__(self, actor: Any, follower: Any) -> None:
        self.actor, self.follower = actor, follower

    def begin(self, goal: str, catalogue: Any) -> None:
        self.actor.begin(goal, catalogue)
        self.follower.begin(goal, catalogue)

    def next_action(self, observation: Any) -> Any:
        return self.actor.next_action(observation)


def play(device: Any, task: TaskInstance, policy: Policy, *, spec: HarnessSpec | None = None,
         on_step: StepHook | None = None, after_step: AfterStep | None = None,
         max_steps: int | None = None, call_policy: Call = _direct,
         call_device: Call = _direct) -> Played:
    """Resets the harnessed `device` to `task` and lets `policy` act up to `max_steps` (default the
    task's) or until the episode is done; `on_step(index, observation, action)` sees each step
    before it runs, `after_step(index, action, observation)` after. A device error while acting
    ends the episode early (`Played.error`); a failed reset and a policy's own error are raised
    to the caller. Every policy call (begin, next_action) goes through `call_policy` and every
    device call (reset, act) through `call_device`."""
    harness = device if isinstance(device, Harness) else Harness(device, spec)
    observation = call_device(harness.reset, task)
    if isinstance(policy, OraclePolicy):
        policy.prepare(task)
    call_policy(policy.begin, task.goal, harness.catalogue())
    actions: list[Any] = []
    limit = task.max_steps if max_steps is None else max_steps
    while len(actions) < limit and not observation.done:
        action = call_policy(policy.next_action, observation)
        if on_step is not None:
            on_step(len(actions), observation, action)
        try:
            observation = call_device(harness.act, action)
        except DeviceError as exc:
            logger.warning("episode %s ended early: %s", task.task_id, exc)
            return Played(harness, actions, observation, False, exc)
        if after_step is not None:
            after_step(len(actions), action, observation)
        actions.append(action)
    return Played(harness, actions, observation, bool(observation.done))


def run_episode(device: Any, task: TaskInstance, policy: Policy,
                spec: HarnessSpec | None = None) -> EpisodeResult:
    """Plays `task` with `policy` on the harnessed `device`, then scores the harness's final
    state. `device` may already be a Harness (then `spec` is ignored)."""
    played = play(device, task, policy, spec=spec)
    harness = played.harness
    result = score_final_state(task, harness.final_state())
    return EpisodeResult(task_id=task.task_id, template=task.template, family=task.family,
                         score=result.score, steps=len(played.actions), finished=played.finished,
                         harness_version=harness.version, progress=result.progress,
                         fault=None if played.error is None else str(played.error))
