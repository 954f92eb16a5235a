"""Held-out values: no template is shut out of train (its own wording is not a leak), and a dev or
test value in a train task is caught."""

from __future__ import annotations

import pytest

from devices.suite.instances import generate_split
from devices.suite.registry import get_template
from services.dataflow.heldout import held_out_mentions, task_text


def test_no_template_is_shut_out_of_train() -> None:
    # A few instances collide with a held-out value by chance (a drawn first and last name that
    # make a dev name) and the generator draws the next; a template whose every instance is
    # flagged would never be trained on.
    usable: dict[str, int] = {}
    for task in generate_split("train", 4, 0):
        usable[task.template] = usable.get(task.template, 0) + (
            not held_out_mentions(task_text(task.goal, task.params)))
    shut_out = sorted(name for name, count in usable.items() if count == 0)
    assert not shut_out, shut_out


def test_template_wording_that_is_also_a_dev_value_is_not_a_leak() -> None:
    # 'keep' is a dev tag; "the others keep running" is cancel_timer_for's wording in every split.
    task = get_template("cancel_timer_for").generate("train", 0, 0)
    assert "keep" in task.goal and held_out_mentions(task_text(task.goal, task.params)) == []


@pytest.mark.parametrize("split", ["dev", "test"])
def test_a_held_out_value_in_a_train_task_is_caught(split: str) -> None:
    train = get_template("cancel_timer_for").generate("train", 0, 0)
    held_out = get_template("reply_latest_from_relation").generate(split, 0, 0)
    leaky = f"{train.goal} {held_out.goal}"  # a goal built from held-out pool values
    assert any(m.startswith(f"{split} value") for m in held_out_mentions(task_text(leaky, train.params)))
