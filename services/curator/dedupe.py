"""Exact and near-duplicate action sequences.

Exact: the sha256 of the canonical action list. Near: within one template, the Jaccard
similarity of the episodes' action tokens (tool name plus each argument as key=value, with
strings case- and space-folded) reaches NEAR_THRESHOLD.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

__all__ = ["NEAR_THRESHOLD", "exact_signature", "jaccard", "tokens"]

logger = logging.getLogger(__name__)

#: Two trajectories sharing 90% of their action tokens teach the same thing.
NEAR_THRESHOLD = 0.9


def _actions(steps: list[Any]) -> list[dict[str, Any]]:
    return [s.action.model_dump(mode="json", exclude_none=True) for s in steps]


def exact_signature(template: str, steps: list[Any]) -> str:
    body = json.dumps([template, _actions(steps)], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(body.encode()).hexdigest()


def _fold(value: Any) -> str:
    if isinstance(value, str):
        return " ".join(value.lower().split())
    return json.dumps(value, sort_keys=True, default=str).lower()


def tokens(steps: list[Any]) -> frozenset[str]:
    out = set()
    for index, action in enumerate(_actions(steps)):
        kind = action.pop("action_type", "?")
        name = action.pop("name", None) or kind
        out.add(f"{index}:{kind}:{name}")
        args = action.pop("arguments", {}) or {}
        for key, value in {**action, **args}.items():
            out.add(f"{name}.{key}={_fold(value)}")
    return frozenset(out)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)
