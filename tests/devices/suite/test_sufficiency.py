"""Every value the oracle acts with is visible to the agent at that step or derived by a rule its
template declares; a context that hides a value, or an undeclared rule, is caught."""

from __future__ import annotations

import pytest

from devices.harness import Harness
from devices.sim import SimPhone
from devices.suite.derived import DERIVED, derived_rules
from devices.suite.instances import generate_split
from devices.suite.registry import get_template
from devices.suite.sufficiency import RULES, audit_task, classify


@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_every_oracle_value_is_visible_or_declared_derived(split: str) -> None:
    harness = Harness(SimPhone())
    problems = []
    for task in generate_split(split, 1, 0):  # type: ignore[arg-type]
        finding = audit_task(task, harness)
        problems += [f"{task.template}: {m}" for m in finding.missing]
        undeclared = finding.rules - set(derived_rules(task.template))
        if undeclared:
            problems.append(f"{task.template} derives values by {sorted(undeclared)}, not declared in "
                            "devices/suite/derived.py")
    assert not problems, "\n".join(problems[:20])


def test_declarations_name_real_templates_and_rules() -> None:
    for name, rules in DERIVED.items():
        get_template(name)
        assert rules and set(rules) <= set(RULES), name
    assert derived_rules("star_relation") == ()
    assert "arithmetic" in derived_rules("composed:star_relation+transfer_half")


def test_a_value_the_context_hides_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    from devices.harness import context

    task = get_template("reply_latest_from_relation").generate("dev", 0, 0)
    assert audit_task(task, Harness(SimPhone())).missing == []
    monkeypatch.setattr(context, "render_result", lambda value, limit=0: "(cut)")  # a context hiding results
    missing = audit_task(task, Harness(SimPhone())).missing
    assert missing and any("id" in m for m in missing)


def test_classify_separates_visible_derived_and_missing() -> None:
    assert classify(("arguments", "id"), "ct42", 'ok {"id":"ct42"}') == "visible"
    assert classify(("arguments", "amount"), 306.01, "balance 612.02") == "arithmetic"
    assert classify(("arguments", "date"), "2026-01-24", "now: 2026-01-21") == "date arithmetic"
    assert classify(("instruction",), "Find it.", "") == "composed text"
    assert classify(("arguments", "id"), "ct42", "nothing here") == "missing"
