"""Seeding: every instance's seed is `sha256(suite_seed:template:index)`, as in AndroidWorld."""

from __future__ import annotations

import hashlib
import random

from schemas.tasks import Split

__all__ = ["SPLIT_INDEX_BASE", "instance_index", "instance_rng", "instance_seed"]

# Splits own disjoint bands of the index space, so a train and a dev instance of the
# same template never share a seed (a million instances per template per split is
# far more than any run draws).
SPLIT_INDEX_BASE: dict[str, int] = {"train": 0, "dev": 1_000_000, "test": 2_000_000}

# 63 bits keeps the seed a non-negative int that fits Parquet's int64 columns.
_SEED_BITS = 63


def instance_index(split: Split, i: int) -> int:
    """The global index of the `i`-th instance of a template in `split`."""
    if i < 0:
        raise ValueError(f"instance number must be >= 0, got {i}")
    return SPLIT_INDEX_BASE[split] + i


def instance_seed(suite_seed: int, template: str, index: int) -> int:
    """The instance seed: the first 63 bits of sha256(f"{suite_seed}:{template}:{index}")."""
    digest = hashlib.sha256(f"{suite_seed}:{template}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - _SEED_BITS)


def instance_rng(seed: int) -> random.Random:
    """A private random generator for one instance (never the global one)."""
    return random.Random(seed)
