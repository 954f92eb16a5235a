"""The no-leak check: no test instance can be generated in train."""

from __future__ import annotations

import pytest

from devices.suite.leakage import check_no_test_leak
from devices.suite.pools import Pool
from devices.suite.registry import all_templates


def test_no_test_instance_can_be_generated_in_train() -> None:
    report = check_no_test_leak(suite_seed=0, sample=6)
    assert report.ok, report.problems
    assert report.held_out_fraction >= 0.2


def test_every_shared_template_pool_is_disjoint_between_train_and_test() -> None:
    for template in all_templates():
        if template.test_only:
            continue
        pools = {**template.pools, **template.list_pools}
        assert pools, f"{template.name} has no held-out parameter"
        for key, pool in pools.items():
            train = {repr(tuple(v) if isinstance(v, list) else v).casefold() for v in pool.train}
            test = {repr(tuple(v) if isinstance(v, list) else v).casefold() for v in pool.test}
            assert not train & test, f"{template.name}.{key}"


def test_pool_refuses_overlapping_values() -> None:
    with pytest.raises(ValueError, match="both train and test"):
        Pool(("a", "b"), ("B", "c"))


def test_test_instances_carry_only_held_out_values() -> None:
    for template in all_templates():
        for i in range(4):
            params = template.generate("test", i, 3).params
            for key, pool in template.pools.items():
                assert pool.contains(params[key], "test")
                assert not pool.contains(params[key], "train"), (template.name, key)
