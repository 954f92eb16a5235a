"""Seeded instance generation: determinism, the sha256 seed formula, split bands, pool checks."""

from __future__ import annotations

import hashlib

import pytest

from devices.suite.instances import generate_split
from devices.suite.registry import get_template, templates_for
from devices.suite.seeding import SPLIT_INDEX_BASE, instance_seed
from devices.suite.template import PoolError, SplitError


def test_generation_is_deterministic() -> None:
    first = generate_split("dev", 2, suite_seed=7)
    second = generate_split("dev", 2, suite_seed=7)
    assert [t.model_dump() for t in first] == [t.model_dump() for t in second]


def test_suite_seed_changes_the_instances() -> None:
    a = generate_split("train", 3, suite_seed=1)
    b = generate_split("train", 3, suite_seed=2)
    assert [t.seed for t in a] != [t.seed for t in b]
    assert [t.params for t in a] != [t.params for t in b]


def test_seed_is_sha256_of_suite_seed_template_and_index() -> None:
    task = get_template("set_alarm").generate("dev", 3, suite_seed=11)
    index = SPLIT_INDEX_BASE["dev"] + 3
    digest = hashlib.sha256(f"11:set_alarm:{index}".encode()).digest()
    assert task.index == index
    assert task.seed == instance_seed(11, "set_alarm", index)
    assert task.seed == int.from_bytes(digest[:8], "big") >> 1


def test_train_and_dev_never_share_a_seed() -> None:
    train = {t.seed for t in generate_split("train", 5, 0)}
    dev = {t.seed for t in generate_split("dev", 5, 0)}
    assert not train & dev


def test_task_ids_are_unique_across_splits() -> None:
    ids = [t.task_id for s in ("train", "dev", "test") for t in generate_split(s, 3, 0)]
    assert len(ids) == len(set(ids))


def test_held_out_template_refuses_train_and_dev() -> None:
    held = next(t for t in templates_for("test") if t.test_only)
    for split in ("train", "dev"):
        with pytest.raises(SplitError, match="held out"):
            held.generate(split, 0, 0)


def test_a_test_value_in_train_params_is_rejected() -> None:
    template = get_template("add_contact")
    params = template.generate("test", 0, 0).params
    with pytest.raises(PoolError, match="not in the train pool"):
        template.check_pools(dict(params), "train")


def test_goal_is_filled_from_params() -> None:
    task = get_template("send_text_message").generate("train", 0, 0)
    assert task.params["person"] in task.goal and "{" not in task.goal
