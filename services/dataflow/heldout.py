"""Held-out values: dev and test pool values that a train task must never carry.

The suite's pools are disjoint per split. A value that no pool offers to train, found in a
train task's goal or parameters (outside a longer train value), means the task would teach
the model something dev or test is meant to measure. Values without a letter (times, dates,
numbers) are left out: templates compute those, so they collide by accident; so are words of
the templates' own wording ("keep the rest" is not the dev tag 'keep'), which every split's
goals carry.
"""

from __future__ import annotations

import json
import logging
import re
import string
from functools import cache
from typing import Any

from devices.suite.leakage import MIN_VALUE_LEN, uncovered_mentions, value_pattern
from devices.suite.pools import all_pools
from devices.suite.registry import all_templates

__all__ = ["held_out_mentions", "task_text"]

logger = logging.getLogger(__name__)

_LETTER = re.compile(r"[A-Za-z]")


@cache
def _split_patterns() -> dict[str, re.Pattern[str] | None]:
    """Train values, and the dev / test values that no pool offers to train (a value that
    two pools place in different splits is not evidence either way) and that no template's
    wording uses."""
    templates = all_templates()  # every template module imported: all_pools() is only what was built
    pools = all_pools()
    values = {split: {v for p in pools for v in p.values(split)
                      if isinstance(v, str) and len(v) >= MIN_VALUE_LEN and _LETTER.search(v)}
              for split in ("train", "dev", "test")}
    wording = "\n".join(_literal_text(getattr(t, "goal_template", "")) for t in templates)
    held_out = {split: {v for v in values[split] - values["train"]
                        if not value_pattern({v}).search(wording)}  # type: ignore[union-attr]
                for split in ("dev", "test")}
    return {"train": value_pattern(values["train"]),
            "dev": value_pattern(held_out["dev"]), "test": value_pattern(held_out["test"])}


def _literal_text(goal_template: str) -> str:
    """A goal template without its placeholders: the wording every instance shares."""
    return " ".join(literal for literal, _, _, _ in string.Formatter().parse(goal_template))


def held_out_mentions(text: str) -> list[str]:
    """Dev or test pool values that `text` mentions outside any train value (the suite's
    pools are disjoint per split, so a train instance mentions none)."""
    patterns = _split_patterns()
    return uncovered_mentions(text, patterns["train"], [(split, patterns[split]) for split in ("dev", "test")])


def task_text(goal: str, params: Any) -> str:
    """What a task says: its goal and its parameters as JSON."""
    return f"{goal} {json.dumps(params, sort_keys=True, default=str)}"
