"""Does a task's catalogue name its template? The share of instances an attacker identifies from
the catalogue alone.

The catalogue shows a task's apps plus 2 or 3 distractor apps drawn per instance
(`devices.suite.template.catalogue_apps`); its tools, skills and sub-agents follow from those
apps. An attacker who knows every template's own apps and the distractor rule can list the
templates that could have produced a catalogue: those whose apps are all in it, with 2 or 3
apps left over from the template's distractor pool. An instance is *identified* when that list
holds one template only. Before distractors, 55 of 204 templates had a catalogue of their own.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from devices.suite.registry import all_templates
from devices.suite.template import DISTRACTORS, Template

__all__ = ["candidates", "catalogue_identification"]


def candidates(apps: set[str], templates: list[Template]) -> list[str]:
    """The templates that could have shown a catalogue of exactly `apps`."""
    low, high = DISTRACTORS
    found = []
    for template in templates:
        own = set(template.apps)
        extra = apps - own
        if own <= apps and low <= len(extra) <= high and extra <= set(template.distractor_apps):
            found.append(template.name)
    return found


def catalogue_identification(split: str = "test", n: int = 5, seed: int = 0) -> dict[str, Any]:
    """Over `n` instances of every template serving `split`: how many catalogues name their
    template alone, the share, and the templates it happened to."""
    templates = [t for t in all_templates() if split in t.splits()]
    identified: Counter[str] = Counter()
    instances = 0
    sizes = []
    for template in templates:
        for i in range(n):
            task = template.generate(split, i, seed)  # type: ignore[arg-type]
            found = candidates(set(task.apps), templates)
            if template.name not in found:
                raise AssertionError(f"{task.task_id}: its catalogue {task.apps} breaks the distractor rule")
            instances += 1
            sizes.append(len(found))
            if found == [template.name]:
                identified[template.name] += 1
    return {"split": split, "instances": instances, "identified": sum(identified.values()),
            "share_identified": round(sum(identified.values()) / instances, 4) if instances else 0.0,
            "median_candidates": sorted(sizes)[len(sizes) // 2] if sizes else 0,
            "identified_templates": dict(identified.most_common())}
