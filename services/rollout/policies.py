"""Policies the rollout can run: oracle (demonstrations), random, noop, or any `MODULE:CLASS`."""

from __future__ import annotations

import importlib
import logging
from typing import Any

from devices.suite.policies import NoopPolicy, RandomPolicy
from services.dataflow.tasks import ScriptedOracle

__all__ = ["PolicyError", "load_policy"]

logger = logging.getLogger(__name__)


class PolicyError(ValueError):
    """The policy named on the command line or in settings cannot be loaded."""


def load_policy(spec: str, seed: int = 0) -> Any:
    """A fresh policy for `spec`: 'oracle', 'random', 'noop' or 'package.module:ClassName'
    (constructed without arguments)."""
    if spec == "oracle":
        return ScriptedOracle()
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
