"""The target mix over family x template x tier: picking the next slice, and bounded shifts.

A slice key is `family/template/tier`. Weights are shares that sum to 1. A shift multiplies
the weights of weak slices, then clamps every share into [MIN_FACTOR/n, MAX_FACTOR/n] (n =
number of slices) and renormalises, so feedback can tilt the mix but never starve a slice
or hand one slice the whole budget.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

__all__ = [
    "MAX_FACTOR",
    "MIN_FACTOR",
    "WEAK_BOOST",
    "clamp_shares",
    "pick_slice",
    "slice_key",
    "split_key",
    "uniform_mix",
]

logger = logging.getLogger(__name__)

#: A slice never falls below a quarter of its uniform share: every slice keeps being sampled.
MIN_FACTOR = 0.25
#: …and never exceeds four times it: one weak template cannot take over the generator.
MAX_FACTOR = 4.0
#: A weak slice's weight is multiplied by up to this much per feedback event.
WEAK_BOOST = 2.0
#: Shares within this of each other count as unchanged (no mix.shifted is emitted).
EPSILON = 1e-6


def slice_key(family: str, template: str, tier: str) -> str:
    return f"{family}/{template}/{tier}"


def split_key(key: str) -> tuple[str, str, str]:
    family, template, tier = key.split("/")
    return family, template, tier


def uniform_mix(keys: list[str]) -> dict[str, float]:
    return {key: 1.0 / len(keys) for key in sorted(keys)} if keys else {}


def clamp_shares(weights: Mapping[str, float], *, min_factor: float = MIN_FACTOR,
                 max_factor: float = MAX_FACTOR) -> dict[str, float]:
    """Normalised shares with each inside [min_factor/n, max_factor/n]."""
    n = len(weights)
    if n == 0:
        return {}
    low, high = min_factor / n, max_factor / n
    total = sum(max(0.0, w) for w in weights.values()) or 1.0
    shares = {k: max(0.0, w) / total for k, w in weights.items()}
    for _ in range(50):  # clamp + renormalise converges in a few rounds
        clamped = {k: min(high, max(low, v)) for k, v in shares.items()}
        total = sum(clamped.values())
        shares = {k: v / total for k, v in clamped.items()}
        if all(low - 1e-12 <= v <= high + 1e-12 for v in shares.values()):
            break
    return dict(sorted(shares.items()))


def pick_slice(weights: Mapping[str, float], proposed: Mapping[str, int]) -> str:
    """The slice furthest below its share of what has been proposed so far (deterministic:
    ties go to the first key)."""
    total = sum(proposed.values()) + 1
    return max(sorted(weights), key=lambda k: weights[k] * total - proposed.get(k, 0))
