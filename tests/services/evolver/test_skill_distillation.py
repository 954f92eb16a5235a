"""A skill distilled from the oracle's solved episodes runs in the real harness and solves
new instances, reading the id it needs from its own earlier step."""

from __future__ import annotations

import json

import pytest

from devices.harness.harness import Harness
from devices.harness.spec import HarnessSpec
from devices.sim import SimPhone
from devices.suite.instances import generate_split
from devices.suite.policies import OraclePolicy
from devices.suite.registry import get_template
from devices.suite.scoring import score_final_state
from schemas.actions import Finish, UseSkill
from schemas.harness import HarnessChange
from services.dataflow.evolution.delta import apply_delta
from services.dataflow.evolution.propose import (
    arguments_from_calls,
    distil_skill,
    success_from_episode,
)
from services.evolver.suite_runner import oracle_calls, suite_collector

# Three shapes: a relation's number looked up, then appended to a note found by topic (two
# earlier results feed the last step); an email found by topic, replied to and starred; a
# duplicate activity found by date and kind, then deleted.
TEMPLATES = ("note_phone_of_relation", "reply_about_topic", "duplicate_activity")


@pytest.mark.parametrize("template", TEMPLATES)
def test_a_distilled_skill_solves_unseen_instances(template: str) -> None:
    events = suite_collector(OraclePolicy, n_per_template=3, templates=[template])(
        None, HarnessSpec.default().to_json_dict(), 1)
    tasks = {e.task_id: e for e in events if e.type == "task.proposed"}
    solved = [success_from_episode(e, template, tasks[e.task_id].goal)
              for e in events if e.type == "episode.ended"]
    skill = distil_skill(template, solved)
    assert skill is not None
    # a later step reads what it needs (an id, a phone number) from an earlier step's result
    assert any("{$" in json.dumps(step["arguments"]) for step in skill["steps"][1:])
    name = skill.pop("name")
    spec = HarnessSpec.from_json_dict(apply_delta(
        HarnessSpec.default().to_json_dict(),
        [HarnessChange(component="skill", op="add", name=name, spec=skill)]))
    for task in generate_split("dev", 2, 0, [get_template(template)]):
        arguments = arguments_from_calls(skill, oracle_calls(task))
        assert set(arguments) == set(skill["parameters"]["properties"])
        harness = Harness(SimPhone(), spec)
        harness.reset(task)
        result = harness.act(UseSkill(skill=name, arguments=arguments)).result
        assert result is not None and result.ok, result
        harness.act(Finish())
        assert score_final_state(task, harness.final_state()).score == 1.0
        # and the skill is not a free pass: another query leaves the task undone
        wrong = {k: (v + " zz" if isinstance(v, str) else v) for k, v in arguments.items()}
        harness.reset(task)
        harness.act(UseSkill(skill=name, arguments=wrong))
        harness.act(Finish())
        assert score_final_state(task, harness.final_state()).score < 1.0
