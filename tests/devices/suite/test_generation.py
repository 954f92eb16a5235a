"""Seeded instance generation: determinism, the sha256 seed formula, split bands, pool checks."""

from __future__ import annotations

import hashlib
import itertools

import pytest

from devices.suite.instances import generate_split
from devices.suite.registry import get_template, templates_for
from devices.suite.seeding import SPLIT_INDEX_BASE, instance_seed
from devices.suite.template import SplitError


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
    task = get_template("alarm_off").generate("dev", 3, suite_seed=11)
    index = SPLIT_INDEX_BASE["dev"] + 3
    digest = hashlib.sha256(f"11:alarm_off:{index}".encode()).digest()
    assert task.index == index
    assert task.seed == instance_seed(11, "alarm_off", index)
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


def test_world_instances_draw_only_their_own_splits_values() -> None:
    template = get_template("text_relation")
    for split in ("train", "dev", "test"):
        _, drawn = template.trace(split, 0, 0)
        assert drawn
        for pool, value in drawn:
            assert pool.contains(value, split)
            assert not any(pool.contains(value, other) for other in ("train", "dev", "test") if other != split)


def test_world_rows_get_random_ids_and_the_start_day_varies() -> None:
    tasks = [get_template("star_relation").generate("train", i, 0) for i in range(6)]
    ids = [{r["id"] for r in t.initial_state["contacts"]["contacts"]} for t in tasks]
    assert all(not a & b for a, b in itertools.pairwise(ids))
    assert not any(i.startswith("ct_task") for s in ids for i in s)
    assert len({t.start_clock_ms for t in tasks}) > 1


def test_goal_is_filled_from_params_and_hides_the_checker_params() -> None:
    task = get_template("text_relation").generate("train", 0, 0)
    assert task.params["relation"] in task.goal and "{" not in task.goal
    assert task.params["_phone"] not in task.goal
