"""The suite's shape: template count, families, held-out share, names and parameter schemas."""

from __future__ import annotations

import re
from collections import Counter
from typing import get_args

from devices.suite.registry import FAMILIES, all_templates, get_template, templates_for
from devices.suite.templates._world import WorldTemplate
from schemas.verdicts import CheckerKind


def test_at_least_forty_templates_over_all_four_families() -> None:
    templates = all_templates()
    assert len(templates) >= 40
    assert set(Counter(t.family for t in templates)) == set(FAMILIES)


def test_every_checker_kind_is_used() -> None:
    assert {t.checker for t in all_templates()} == set(get_args(CheckerKind))


def test_at_least_a_fifth_of_templates_are_held_out_for_test() -> None:
    templates = all_templates()
    held_out = [t for t in templates if t.test_only]
    assert len(held_out) / len(templates) >= 0.2
    assert not {t.name for t in held_out} & {t.name for t in templates_for("train")}
    assert {t.name for t in templates_for("test")} == {t.name for t in templates}


def test_every_family_has_train_and_held_out_templates() -> None:
    for family in FAMILIES:
        assert templates_for("train", family), family
        assert any(t.test_only for t in all_templates() if t.family == family), family


def test_parameter_schemas_name_every_generated_parameter() -> None:
    for template in all_templates():
        instance = template.generate(template.splits()[0], 0, suite_seed=0)
        if isinstance(template, WorldTemplate):
            # the goal states every public parameter; "_" ones are the checker's alone
            public = {k for k in instance.params if not k.startswith("_")}
            assert public == set(re.findall(r"{(\w+)}", template.goal_template)), template.name
        else:
            assert set(instance.params) == set(template.parameters["properties"]), template.name


def test_get_template_by_name_and_unknown_name() -> None:
    assert get_template("text_relation").family == "tool"
    try:
        get_template("no_such_template")
    except KeyError as exc:
        assert "flywheel suite list" in str(exc)
    else:  # pragma: no cover - the assertion below documents the failure
        raise AssertionError("an unknown template name must raise")
