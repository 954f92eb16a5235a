"""Policies the rollout can run: oracle (demonstrations), random, noop, or any `MODULE:CLASS`.

With a recovery share (`FLYWHEEL_ROLLOUT_RECOVERY`), the oracle is a `SlippingOracle`: in that
share of its episodes (chosen by the task id, so a redelivered task repeats the same episode) it
first plays one slip the phone refuses (`devices.suite.slips`) and then the oracle's own action.
The slip's step says `last_target = False`, which the rollout records on the step, so the curator
never teaches it; the rows after it show the error and the way on (recovery data).
"""

from __future__ import annotations

import importlib
import logging
import random
from typing import Any

from devices.suite.policies import NoopPolicy, RandomPolicy
from devices.suite.slips import slip_for
from services.dataflow.tasks import ScriptedOracle

__all__ = ["PolicyError", "SlippingOracle", "load_policy"]

logger = logging.getLogger(__name__)


class PolicyError(ValueError):
    """The policy named on the command line or in settings cannot be loaded."""


class SlippingOracle(ScriptedOracle):
    """The scripted oracle which, in `share` of its episodes, plays one slip before its first
    tool call that can take one; `last_target` is False for the slip's step."""

    #: In-process and bounded: a rollout calls it without a timeout thread.
    bounded_calls = True

    def __init__(self, share: float) -> None:
        super().__init__()
        self.share = share
        self.last_target = True
        self._pending = False
        self._queued: Any = None
        self._rng = random.Random(0)

    def prepare(self, task: Any) -> None:
        super().prepare(task)
        self._rng = random.Random(f"slip:{task.task_id}")
        self._pending = self._rng.random() < self.share
        self._queued, self.last_target = None, True

    def next_action(self, observation: Any) -> Any:
        if self._queued is not None:  # the oracle's own action, after the refused slip
            action, self._queued, self.last_target = self._queued, None, True
            return action
        action = super().next_action(observation)
        wrong = slip_for(action, self._rng) if self._pending else None
        if wrong is None:
            self.last_target = True
            return action
        self._pending, self._queued, self.last_target = False, action, False
        return wrong


def load_policy(spec: str, seed: int = 0, *, recovery: float = 0.0) -> Any:
    """A fresh policy for `spec`: 'oracle', 'random', 'noop' or 'package.module:ClassName'
    (constructed without arguments); the oracle slips in `recovery` of its episodes."""
    if spec == "oracle":
        return SlippingOracle(recovery) if recovery > 0 else ScriptedOracle()
    if spec == "random":
        return RandomPolicy(seed)
    if spec == "noop":
        return NoopPolicy()
    module_name, sep, class_name = spec.partition(":")
    if not sep or not module_name or not class_name:
        raise PolicyError(f"unknown policy {spec!r}; use oracle, random, noop or MODULE:CLASS")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as error:
        raise PolicyError(f"cannot load policy {spec!r}: {error}") from None
    policy = cls()
    for method in ("begin", "next_action"):
        if not callable(getattr(policy, method, None)):
            raise PolicyError(f"policy {spec!r} has no {method}() method; a policy needs "
                              "begin(...) and next_action(observation)")
    return policy
