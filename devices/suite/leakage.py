"""The no-leak check: no test instance can be generated in train, proven from the pools."""

from __future__ import annotations

from dataclasses import dataclass, field

from devices.suite.registry import all_templates, templates_for
from devices.suite.template import SplitError

__all__ = ["MIN_HELD_OUT_FRACTION", "LeakReport", "check_no_test_leak"]

# The issue asks that at least a fifth of the templates appear only in test.
MIN_HELD_OUT_FRACTION = 0.2
# Instances per template drawn to confirm the pool argument on real generation.
_SAMPLE_PER_TEMPLATE = 12


@dataclass
class LeakReport:
    """What the check found; `ok` is True only when every problem list is empty."""

    templates: int = 0
    held_out: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def held_out_fraction(self) -> float:
        return len(self.held_out) / self.templates if self.templates else 0.0

    @property
    def ok(self) -> bool:
        return not self.problems


def check_no_test_leak(suite_seed: int = 0, sample: int = _SAMPLE_PER_TEMPLATE) -> LeakReport:
    """Proves test instances are unreachable from train, then confirms it on real generation.

    The argument: (1) a held-out template refuses to generate outside test, and is absent
    from the train template list; (2) every other template draws at least one parameter from
    a pool whose train and test values are disjoint (checked here, and by `Pool` itself);
    (3) `Template.generate` rejects any pooled value outside its split's pool. So every test
    instance carries a value no train instance can carry. The sampling part re-checks (2)
    and (3) on generated instances, which catches a template that forgot to use its pool.
    """
    report = LeakReport()
    templates = all_templates()
    report.templates = len(templates)
    train_names = {t.name for t in templates_for("train")}
    for template in templates:
        if template.test_only:
            report.held_out.append(template.name)
            if template.name in train_names:
                report.problems.append(f"{template.name} is held out but listed for train")
            try:
                template.generate("train", 0, suite_seed)
            except SplitError:
                pass
            else:
                report.problems.append(f"{template.name} is held out but generated a train instance")
            continue
        pooled = {**template.pools, **template.list_pools}
        if not pooled:
            report.problems.append(f"{template.name} has no held-out parameter pool")
            continue
        for key, pool in pooled.items():
            if {repr(v).casefold() for v in pool.train} & {repr(v).casefold() for v in pool.test}:
                report.problems.append(f"{template.name}.{key}: train and test pools overlap")
        train = [template.generate("train", i, suite_seed) for i in range(sample)]
        test = [template.generate("test", i, suite_seed) for i in range(sample)]
        train_params = {repr(sorted(t.params.items())) for t in train}
        for instance in test:
            if repr(sorted(instance.params.items())) in train_params:
                report.problems.append(f"{instance.task_id} has the params of a train instance")
            for key, pool in template.pools.items():
                if pool.contains(instance.params[key], "train"):
                    report.problems.append(f"{instance.task_id}: {key} uses a train value")
            for key, pool in template.list_pools.items():
                if any(pool.contains(v, "train") for v in instance.params[key]):
                    report.problems.append(f"{instance.task_id}: {key} uses a train value")
    if report.held_out_fraction < MIN_HELD_OUT_FRACTION:
        report.problems.append(
            f"only {report.held_out_fraction:.0%} of templates are held out for test; "
            f"at least {MIN_HELD_OUT_FRACTION:.0%} must be")
    return report
