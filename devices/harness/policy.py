"""The policy protocol (the agent boundary), loading a `MODULE:CLASS` policy, and the claim-only
agent: what runs a policy needs, on a simulated or a real phone, without the suite.

A policy sees what an agent on a phone sees: the goal text, the harness's catalogue and each
observation. devices.suite.policies adds the reference policies that know the suite (the oracle,
the random agent) and keeps these names importable.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol, runtime_checkable

from devices.harness.catalogue import Catalogue
from schemas.actions import Answer, Finish
from schemas.observations import Observation

__all__ = ["ClaimPolicy", "Policy", "PolicyLoadError", "PrivilegedPolicy", "load_policy"]


@runtime_checkable
class Policy(Protocol):
    """An agent the evaluator can run.

    `begin(goal, catalogue)` starts an episode: the goal text and the harness's catalogue
    (tools with descriptions and JSON-Schema arguments, skills, sub-agents, playbook notes).
    `next_action(observation)` returns one `schemas.actions.Action` per step, given what the
    last action led to (the first call gets the observation after reset).
    """

    name: str

    def begin(self, goal: str, catalogue: Catalogue) -> None: ...

    def next_action(self, observation: Observation) -> Any: ...


class PrivilegedPolicy:
    """A reference policy that may read the task itself (the suite's, the services' and the real
    phone's oracles): `devices.harness.episode.play` hands it the task with `prepare(task)` after
    the reset and before `begin`. No agent under test is one: a MODULE:CLASS policy runs sealed
    in a process of its own (devices.harness.sealed), and play sees only the sealed stand-in."""

    def prepare(self, task: Any) -> None:
        raise NotImplementedError


class PolicyLoadError(ValueError):
    """`--policy MODULE:CLASS` names something that cannot be imported or is not a policy."""


class ClaimPolicy:
    """An agent that only claims success: it answers with the goal plus 'done', then finishes."""

    name = "claim"

    def begin(self, goal: str, catalogue: Catalogue) -> None:
        self._claim = f"Done. {goal} I have completed this task successfully."
        self._said = False

    def next_action(self, observation: Observation) -> Any:
        if not self._said:
            self._said = True
            return Answer(text=self._claim)
        return Finish(answer=self._claim)


def load_policy(spec: str) -> Policy:
    """An instance of the class `MODULE:CLASS` (constructed without arguments), checked to
    implement the Policy protocol."""
    module_name, _, class_name = spec.partition(":")
    if not module_name or not class_name:
        raise PolicyLoadError(f"policy {spec!r} must be a built-in name or MODULE:CLASS")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise PolicyLoadError(f"cannot import module {module_name!r} for policy {spec!r} "
                              f"({exc}); is it on PYTHONPATH?") from None
    target: Any = module
    for part in class_name.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise PolicyLoadError(f"module {module_name!r} has no {class_name!r}")
    try:
        policy = target() if isinstance(target, type) else target
    except TypeError as exc:
        raise PolicyLoadError(f"policy class {spec} must be constructible without arguments "
                              f"({exc})") from None
    if not isinstance(policy, Policy) or not isinstance(getattr(policy, "name", None), str):
        raise PolicyLoadError(f"{spec} does not implement the policy protocol: it needs a str "
                              "`name`, begin(goal, catalogue) and next_action(observation)")
    return policy
