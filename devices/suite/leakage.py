"""The leakage check: dev and test instances carry no value train (or, for test, dev) can carry.

The argument, checked here template by template:
1. every pool's train, dev and test values are pairwise disjoint (`Pool` refuses otherwise);
2. a held-out template refuses to generate train and dev instances and is not listed there;
3. every value a template draws for an instance comes from its split's part of the pool
   (world templates report their draws; classic ones are checked through `pools`);
4. no dev instance's goal or parameters mention a train value of any pool, and no
   test instance mentions a train or dev value; a mention inside a longer value of the
   instance's own split ("Noor Haddad" containing "Noor") does not count;
5. no dev instance repeats a train instance's parameters, no test instance a train or dev one.
(4) is what catches a template that forgot its pool and picks from another split's values.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from devices.suite.pools import Pool, all_pools
from devices.suite.registry import all_templates, templates_for
from devices.suite.template import SplitError, Template

__all__ = ["MIN_HELD_OUT_FRACTION", "MIN_VALUE_LEN", "LeakReport", "check_leakage", "check_no_test_leak",
           "foreign_mentions", "uncovered_mentions", "value_pattern"]

logger = logging.getLogger(__name__)

# The issue asks that at least a fifth of the templates appear only in test.
MIN_HELD_OUT_FRACTION = 0.2
# Instances per template and split drawn to check generation for real.
_SAMPLE_PER_TEMPLATE = 12
# Shorter strings ("5", "on") are too common in ordinary text to prove anything.
MIN_VALUE_LEN = 3
_SPLITS = ("train", "dev", "test")
# Which other splits' values a split must never mention.
_FORBIDDEN = {"dev": ("train",), "test": ("train", "dev")}


@dataclass
class LeakReport:
    """What the check found; `ok` is True only when `problems` is empty."""

    templates: int = 0
    held_out: list[str] = field(default_factory=list)
    instances: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def held_out_fraction(self) -> float:
        return len(self.held_out) / self.templates if self.templates else 0.0

    @property
    def ok(self) -> bool:
        return not self.problems


def _strings(pools: Iterable[Pool], split: str) -> set[str]:
    return {v for p in pools for v in p.values(split) if isinstance(v, str) and len(v) >= MIN_VALUE_LEN}


def value_pattern(values: set[str]) -> re.Pattern[str] | None:
    """A regex matching any of `values` as a whole word (longest first), or None for no values.

    The values are written as a trie (`Ana|Anna` as `An(?:a|na)`): the regex engine then tries
    one branch per character instead of every value at every position (the generator and the
    curator scan each task for held-out values: ~10x faster). It matches what the plain
    longest-first alternation matches: values that match at one position are prefixes of one
    another, on one path of the trie, and each optional tail is tried before its end."""
    if not values:
        return None
    return re.compile(rf"(?<![\w-])(?:{_trie_regex(values)})(?![\w-])")


def _trie_regex(values: Iterable[str]) -> str:
    trie: dict[str, Any] = {}
    for value in values:
        node = trie
        for char in value:
            node = node.setdefault(char, {})
        node[""] = {}  # a value ends here

    def body(node: dict[str, Any]) -> str:
        branches = [re.escape(char) + body(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        group = branches[0] if len(branches) == 1 and len(branches[0]) == 1 else f"(?:{'|'.join(branches)})"
        return f"{group}?" if "" in node else group

    return body(trie)


def uncovered_mentions(text: str, own: re.Pattern[str] | None,
                       others: Iterable[tuple[str, re.Pattern[str] | None]]) -> list[str]:
    """`"<split> value '<v>'"` for each match of an `others` pattern in `text` that does not lie
    inside a match of `own` ("Noor" inside the own-split "Noor Haddad" does not count)."""
    covered = [m.span() for m in own.finditer(text)] if own else []
    found = []
    for split, pattern in others:
        if pattern is None:
            continue
        for m in pattern.finditer(text):
            start, end = m.span()
            if not any(a <= start and end <= b for a, b in covered):
                found.append(f"{split} value {m.group(0)!r}")
    return found


@cache
def _patterns(pool_ids: tuple[int, ...]) -> dict[str, re.Pattern[str] | None]:
    pools = [p for p in all_pools() if id(p) in pool_ids]
    return {split: value_pattern(_strings(pools, split)) for split in _SPLITS}


def foreign_mentions(text: str, split: str, pools: Sequence[Pool] | None = None) -> list[str]:
    """Values of the splits `split` must not see that `text` mentions (outside own-split values)."""
    if split not in _FORBIDDEN:
        return []
    patterns = _patterns(tuple(sorted(id(p) for p in (all_pools() if pools is None else pools))))
    return uncovered_mentions(text, patterns[split], [(other, patterns[other]) for other in _FORBIDDEN[split]])


def _instances(template: Template, split: str, n: int, seed: int) -> list[tuple[Any, list[tuple[Pool, Any]]]]:
    trace = getattr(template, "trace", None)
    out = []
    for i in range(n):
        if trace is not None:
            out.append(trace(split, i, seed))
        else:
            task = template.generate(split, i, seed)
            drawn = [(pool, task.params[k]) for k, pool in template.pools.items()]
            drawn += [(pool, v) for k, pool in template.list_pools.items() for v in task.params[k]]
            out.append((task, drawn))
    return out


def _params_key(task: Any) -> str:
    return json.dumps(task.params, sort_keys=True, default=str)


def check_leakage(suite_seed: int = 0, sample: int = _SAMPLE_PER_TEMPLATE,
                  templates: Sequence[Template] | None = None) -> LeakReport:
    """Runs checks 1-5 above over `templates` (default: the registry)."""
    report = LeakReport()
    chosen = list(all_templates() if templates is None else templates)
    report.templates = len(chosen)
    listed = {s: {t.name for t in templates_for(s)} for s in ("train", "dev")}
    for template in chosen:
        if template.test_only:
            report.held_out.append(template.name)
            for split in ("train", "dev"):
                if templates is None and template.name in listed[split]:
                    report.problems.append(f"{template.name} is held out but listed for {split}")
                try:
                    template.generate(split, 0, suite_seed)
                except SplitError:
                    pass
                else:
                    report.problems.append(f"{template.name} is held out but generated a {split} instance")
        seen: dict[str, set[str]] = {}
        for split in template.splits():
            keys: set[str] = set()
            carried = False
            for task, drawn in _instances(template, split, sample, suite_seed):
                report.instances += 1
                for pool, value in drawn:
                    others = [s for s in _SPLITS if s != split and pool.contains(value, s)]
                    if not pool.contains(value, split) or others:
                        report.problems.append(f"{task.task_id}: drew {value!r} outside the {split} pool")
                pools = list(all_pools())
                public = {k: v for k, v in task.params.items() if not str(k).startswith("_")}
                text = f"{task.goal} {json.dumps(public, default=str)}"
                for mention in foreign_mentions(text, split, pools):
                    report.problems.append(f"{task.task_id} mentions a {mention}")
                carried = carried or bool(drawn)
                key = _params_key(task)
                for earlier in _FORBIDDEN.get(split, ()):
                    if key in seen.get(earlier, set()):
                        report.problems.append(f"{task.task_id} has the params of a {earlier} instance")
                keys.add(key)
            seen[split] = keys
            if split != "train" and not carried and not template.test_only:
                report.problems.append(f"{template.name} draws no pooled value in {split}")
    if report.held_out_fraction < MIN_HELD_OUT_FRACTION:
        report.problems.append(
            f"only {report.held_out_fraction:.0%} of templates are held out for test; "
            f"at least {MIN_HELD_OUT_FRACTION:.0%} must be")
    return report


# The older name (test only); the check now covers dev as well.
check_no_test_leak = check_leakage
