"""The one episode loop: a policy acting on a harnessed phone, step by step.

`play` is the loop (reset, begin, act until `max_steps` or done) with two hooks: `on_step(index,
observation, action)`, called after the policy chose an action and before the harness runs it
(what recording, teacher forcing and slips need), and `after_step(index, action, observation)`
with what the phone answered (what a recorded episode keeps); every policy call goes through
`call_policy` and every device call through `call_device` (the rollout's per-call timeout and
busy clock). The policy sees the goal, the harness's catalogue and observations only; a
privileged reference policy (`devices.harness.policy.PrivilegedPolicy`: the oracles) alone is
prepared with the task.

It lives in the harness layer so that every phone plays through it: the suite's evaluation and
the evolver's gate (`devices.suite.episode.run_episode`), the rollout, oracle snapshots, the
generator's oracle check, the curator's corrections and the real phone's suite run
(`devices.adb.suite`). `tests/devices/suite/test_one_episode_loop.py` names the few loops that
may stand apart (batched evaluation, the fingerprint's reference loop) and fails on any new one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from devices.harness.harness import Harness
from devices.harness.policy import Policy, PrivilegedPolicy
from devices.harness.spec import HarnessSpec
from devices.protocol import DeviceError, TaskInstance

__all__ = ["AfterStep", "Alongside", "Call", "Episode", "Played", "StepHook", "play"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Played:
    """What `play` did: the actions taken, the last observation, and how it ended."""

    harness: Harness
    actions: list[Any]
    observation: Any
    finished: bool
    error: DeviceError | None = None

    def checked(self) -> Played:
        """This episode, or the device error that ended it early, raised."""
        if self.error is not None:
            raise self.error
        return self


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


class Episode:
    """One episode as a machine stepped from outside: reset, prepare (a privileged policy
    alone) and begin on construction, then `step(action)` until `over`. `play` drives one to
    its end, asking its policy each step; batched evaluation (`trainer.batched`) drives many at
    once, deciding their actions in one batched decode. Either way the limits, the hooks and the
    handling of a device error are this class's."""

    def __init__(self, device: Any, task: TaskInstance, policy: Policy, *,
                 spec: HarnessSpec | None = None, on_step: StepHook | None = None,
                 after_step: AfterStep | None = None, max_steps: int | None = None,
                 call_policy: Call = _direct, call_device: Call = _direct) -> None:
        self.task, self.policy = task, policy
        self.on_step, self.after_step = on_step, after_step
        self.call_policy, self.call_device = call_policy, call_device
        self.harness = device if isinstance(device, Harness) else Harness(device, spec)
        self.observation = call_device(self.harness.reset, task)
        if isinstance(policy, PrivilegedPolicy):
            policy.prepare(task)
        call_policy(policy.begin, task.goal, self.harness.catalogue())
        self.actions: list[Any] = []
        self.limit = task.max_steps if max_steps is None else max_steps
        self.error: DeviceError | None = None

    @property
    def over(self) -> bool:
        """The step limit is reached, the phone says done, or a device error ended it."""
        return self.error is not None or len(self.actions) >= self.limit or bool(self.observation.done)

    def ask(self) -> Any:
        """The policy's next action for the current observation."""
        return self.call_policy(self.policy.next_action, self.observation)

    def step(self, action: Any) -> None:
        """Runs `action` on the phone (hooks around it); a device error ends the episode."""
        index = len(self.actions)
        if self.on_step is not None:
            self.on_step(index, self.observation, action)
        try:
            self.observation = self.call_device(self.harness.act, action)
        except DeviceError as exc:
            logger.warning("episode %s ended early: %s", self.task.task_id, exc)
            self.error = exc
            return
        if self.after_step is not None:
            self.after_step(index, action, self.observation)
        self.actions.append(action)

    def played(self) -> Played:
        """What the episode did so far."""
        finished = self.error is None and bool(self.observation.done)
        return Played(self.harness, self.actions, self.observation, finished, self.error)


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
    episode = Episode(device, task, policy, spec=spec, on_step=on_step, after_step=after_step,
                      max_steps=max_steps, call_policy=call_policy, call_device=call_device)
    while not episode.over:
        episode.step(episode.ask())
    return episode.played()
