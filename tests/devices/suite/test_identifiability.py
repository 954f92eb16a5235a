"""The catalogue does not name the task: every instance shows 2-3 distractor apps drawn per
instance, and an attacker who knows every template's apps rarely narrows a catalogue to one."""

from __future__ import annotations

import pytest

from devices.harness import Harness
from devices.sim import SimPhone
from devices.suite.identifiability import candidates, catalogue_identification
from devices.suite.registry import all_templates, get_template
from devices.suite.template import APPS
from devices.suite.templates.subagent import ALL_HELPER_APPS


def test_every_instance_shows_its_apps_plus_two_or_three_distractors() -> None:
    for template in all_templates():
        split = template.splits()[0]
        seen = set()
        for i in range(4):
            task = template.generate(split, i, 0)
            extra = set(task.apps) - set(template.apps)
            assert set(template.apps) <= set(task.apps), task.task_id
            assert 2 <= len(extra) <= 3 and extra <= set(template.distractor_apps), task.task_id
            assert task.apps == sorted(task.apps), "the order must not tell distractors apart"
            assert template.generate(split, i, 0).apps == task.apps, "drawn from the instance seed"
            seen.add(tuple(task.apps))
        assert len(seen) > 1, f"{template.name}: every instance shows the same catalogue"


def test_distractors_leave_the_rest_of_the_instance_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    # The draw has its own stream: without it the seed makes the same goal, params and world.
    import devices.suite.template as template_module
    import devices.suite.templates._world as world_module

    names = ("sa_closer_of_two", "mem_locker_code", "text_relation")
    drawn = [get_template(n).generate("train", 0, 0) for n in names]
    bare = lambda apps, seed, pool=APPS: list(apps)
    monkeypatch.setattr(template_module, "catalogue_apps", bare)
    monkeypatch.setattr(world_module, "catalogue_apps", bare)
    for name, task in zip(names, drawn, strict=True):
        plain = get_template(name).generate("train", 0, 0)
        assert plain.apps == list(get_template(name).apps) != task.apps
        assert plain.model_dump(exclude={"apps"}) == task.model_dump(exclude={"apps"})


def test_sub_agent_tasks_offer_more_than_the_helper_they_need() -> None:
    harness = Harness(SimPhone())
    for name in ("sa_closer_of_two", "sa_checkout_home", "sa_parallel_errands"):
        for i in range(3):
            harness.reset(get_template(name).generate("train", i, 0))
            assert len(harness.catalogue().subagents) >= 2, name
    assert set(get_template("sa_closer_of_two").distractor_apps) == set(ALL_HELPER_APPS)


def test_few_catalogues_name_their_template() -> None:
    report = catalogue_identification("test", 3, 0)
    # Measured 5% with 5 instances per template (before distractors 55 of 204 templates had a
    # catalogue of their own); the big joined errands are what remains.
    assert report["share_identified"] <= 0.08, report
    assert report["median_candidates"] >= 5


def test_a_catalogue_without_distractors_has_no_candidate() -> None:
    # The negative case: the bare app set of a template is not a catalogue the suite shows.
    templates = all_templates()
    template = get_template("sa_closer_of_two")
    assert template.name not in candidates(set(template.apps), templates)
    assert template.name in candidates(set(template.apps) | {"notes", "files"}, templates)
    assert template.name not in candidates(set(template.apps) | {"bank", "health"}, templates), \
        "bank and health are no helper's apps, so no sub-agent task draws them"
