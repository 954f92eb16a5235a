"""Measures a template's oracle: how many actions it takes and how many of its steps read a
value from an observation (its chain of dependent lookups), so tiers are measured, not guessed."""

from __future__ import annotations

import logging
from typing import Any

from devices.suite.template import Template, tier_for
from schemas.actions import Finish

__all__ = ["declare", "measure", "profile"]

logger = logging.getLogger(__name__)


def measure(template: Template, split: str | None = None, index: int = 0,
            seed: int = 0) -> tuple[int, int]:
    """(oracle actions, lookups) on one instance: actions exclude a bare closing `finish`;
    lookups count the steps after which the oracle read the observation."""
    from devices.harness.harness import Harness
    from devices.sim.phone import SimPhone

    task = template.generate(split or template.splits()[0], index, seed)
    harness = Harness(SimPhone())
    observation = harness.reset(task)
    reads: set[int] = set()
    last: dict[str, Any] = {"obs": observation, "step": 0}

    def observe() -> Any:
        reads.add(last["step"])
        return last["obs"]

    actions = []
    for action in template.oracle(dict(task.params), observe):
        actions.append(action)
        last["obs"] = harness.act(action)
        last["step"] = len(actions)
    if actions and isinstance(actions[-1], Finish) and actions[-1].answer is None:
        actions.pop()
    return len(actions), len(reads - {0})


def profile(template: Template) -> tuple[bool, int, str]:
    """(needs_lookup, chain, tier) as measured."""
    actions, lookups = measure(template)
    return lookups > 0, lookups, tier_for(actions, lookups)


def declare(templates: tuple[type[Template], ...], measured: dict[str, tuple[int, int]]) -> None:
    """Sets needs_lookup, chain and tier on each template class from its measured
    (oracle actions, lookups); tests re-measure and compare, so the figures cannot go stale."""
    for cls in templates:
        actions, lookups = measured[cls.name]
        cls.needs_lookup = lookups > 0
        cls.chain = lookups
        cls.tier = tier_for(actions, lookups)
