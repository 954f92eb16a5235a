"""Seeded instance generation for a split: n instances of every template that serves it."""

from __future__ import annotations

from devices.protocol import TaskInstance
from devices.suite.registry import get_template, templates_for
from devices.suite.template import Template
from schemas.tasks import Split

__all__ = ["first_instances", "generate_split", "of_tiers"]


def generate_split(split: Split, n_per_template: int, suite_seed: int,
                   templates: list[Template] | None = None) -> list[TaskInstance]:
    """Instances 0..n-1 of every template serving `split`, in a stable order."""
    if n_per_template < 1:
        raise ValueError(f"n_per_template must be at least 1, got {n_per_template}")
    chosen = templates_for(split) if templates is None else templates
    return [t.generate(split, i, suite_seed) for t in chosen for i in range(n_per_template)]


def of_tiers(tasks: list[TaskInstance], tiers: list[str] | None) -> list[TaskInstance]:
    """The tasks whose template is of one of `tiers` (all of them when `tiers` is empty)."""
    return [t for t in tasks if not tiers or get_template(t.template).tier in tiers]


def first_instances(tasks: list[TaskInstance], limit: int | None) -> list[TaskInstance]:
    """At most `limit` tasks taken instance by instance (every template's first instance before
    any second one: a stable sort on the index), so a limit still covers the templates; all of
    them without a limit."""
    return sorted(tasks, key=lambda task: task.index)[:limit] if limit else list(tasks)
