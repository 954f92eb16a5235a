"""The memory, skill and sub-agent families: the oracle solves every split from observations
alone; facts live only in memory; a broken lookup breaks the oracle; over-acting, spraying and
the wrong collaboration score 0; the public attackers stay at 0."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import pytest

from devices.harness.harness import Harness
from devices.harness.spec import HarnessSpec, ToolPolicy
from devices.sim import SimPhone
from devices.suite.baselines import ATTACKERS, score_public
from devices.suite.episode import run_episode
from devices.suite.policies import ClaimPolicy, NoopPolicy, OraclePolicy, RandomPolicy
from devices.suite.registry import all_templates, get_template
from devices.suite.scoring import score_final_state
from devices.suite.template import tier_for
from devices.suite.templates._profile import profile
from schemas.actions import Delegate, Finish, MemoryRead, MemoryWrite, ToolCall, UseSkill

MODULES = ("memory", "skills", "subagent", "memory_deep", "skills_deep", "subagent_deep", "family_errands")
FAMILIES = ("memory", "skills", "subagent")
TEMPLATES = [cls() for m in MODULES
             for cls in importlib.import_module(f"devices.suite.templates.{m}").TEMPLATES]


def test_the_families_are_as_large_as_asked() -> None:
    counts = {f: sum(t.family == f for t in TEMPLATES) for f in FAMILIES}
    assert counts["memory"] >= 20 and counts["skills"] >= 20 and counts["subagent"] >= 10


@pytest.mark.parametrize("split", ["train", "dev", "test"])
def test_oracle_scores_one_on_every_split(split: str) -> None:
    harness = Harness(SimPhone())
    failed, played = {}, 0
    for template in TEMPLATES:
        if split not in template.splits():
            continue
        for i in range(3):
            task = template.generate(split, i, 11)
            result = run_episode(harness, task, OraclePolicy())
            played += 1
            if result.score != 1.0:
                failed[task.task_id] = result.score
    assert played >= 3 * len(FAMILIES), f"only {played} {split} tasks played"
    assert not failed


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.name)
def test_declared_tier_and_chain_agree_with_the_measured_oracle(template: Any) -> None:
    actions, lookups = profile(template)
    assert template.needs_lookup == (lookups > 0)
    assert (lookups > 0) <= template.chain <= lookups
    assert template.tier == tier_for(actions, template.chain)


def _oracle_score(task: Any, spec: HarnessSpec | None = None) -> float:
    try:
        return run_episode(Harness(SimPhone(), spec), task, OraclePolicy()).score
    except (LookupError, StopIteration, KeyError, TypeError, ValueError, RuntimeError):
        return 0.0


def _without_memory(task: Any) -> Any:
    return task.model_copy(update={"initial_state": {
        k: v for k, v in task.initial_state.items() if k != "memory"}})


def _reads_memory(template: Any, index: int = 0) -> bool:
    harness = Harness(SimPhone())
    task = template.generate(template.splits()[0], index, 0)
    run_episode(harness, task, OraclePolicy())
    return any(e["kind"] == "memory_read" for e in harness.final_state()["log"])


@pytest.mark.parametrize("template", [t for t in TEMPLATES if t.family == "memory"],
                         ids=lambda t: t.name)
def test_a_memory_fact_cannot_be_found_on_the_phone(template: Any) -> None:
    if not _reads_memory(template):
        pytest.skip("this template writes memory rather than reading it")
    task = template.generate(template.splits()[0], 0, 0)
    assert _oracle_score(task) == 1.0
    assert _oracle_score(_without_memory(task)) == 0.0


def _read_tools(template: Any) -> set[str]:
    harness = Harness(SimPhone())
    task = template.generate(template.splits()[0], 1, 0)
    run_episode(harness, task, OraclePolicy())
    catalogue = harness.catalogue()
    return {e["name"] for e in harness.final_state()["log"] if e["kind"] == "tool_call"
            and (tool := catalogue.tool(e["name"])) is not None and not tool.writes}


@pytest.mark.parametrize("template", [t for t in TEMPLATES if t.needs_lookup],
                         ids=lambda t: t.name)
def test_breaking_a_lookup_breaks_the_oracle(template: Any) -> None:
    """Hiding any tool the oracle reads from breaks it; where it reads no tool, its lookups are
    memory reads, and the task without its memory breaks it. (Templates that need no lookup
    have nothing to break: test_declared_tier_and_chain_agree_with_the_measured_oracle holds
    them to that.)"""
    task = template.generate(template.splits()[0], 1, 0)
    tools = sorted(_read_tools(template))
    for tool in tools:
        broken = HarnessSpec.default().model_copy(update={"tools": ToolPolicy(hidden=(tool,))})
        assert _oracle_score(task, broken) == 0.0, tool
    if not tools:
        assert _reads_memory(template, 1), "a lookup that reads neither a tool nor memory"
        assert _oracle_score(task) == 1.0
        assert _oracle_score(_without_memory(task)) == 0.0


# ---- the checkers cannot be fooled ---------------------------------------------------------------

def _play(name: str, actions: Callable[[Any, Any], list[Any]]) -> float:
    task = get_template(name).generate("dev", 0, 3)
    harness = Harness(SimPhone())
    harness.reset(task)
    for action in actions(harness.device.state, task):
        harness.act(action)
    return score_final_state(task, harness.final_state()).score


def _relation_contact(state: Any, task: Any) -> dict[str, Any]:
    return next(r for r in state.rows("contacts", "contacts") if r["name"] == task.params["person"])


def _text(phone: str, task: Any) -> ToolCall:
    return ToolCall(name="messages.send", arguments={"phone": phone, "body": task.params["phrase"]})


MEMORY_CASES = {
    "right": lambda s, t: [MemoryRead(query=t.params["relation"]),
                           _text(_relation_contact(s, t)["phone"], t), Finish()],
    "namesake": lambda s, t: [_text(next(r for r in s.rows("contacts", "contacts")
                                         if r["name"] == t.params["namesake"])["phone"], t)],
    "over_acting": lambda s, t: [_text(_relation_contact(s, t)["phone"], t),
                                 ToolCall(name="contacts.star", arguments={
                                     "id": _relation_contact(s, t)["id"], "starred": True})],
    "spraying": lambda s, t: [_text(r["phone"], t) for r in s.rows("contacts", "contacts")
                              if r["name"] in (t.params["person"], t.params["namesake"],
                                               *t.params["others"])],
    "memory_scribble": lambda s, t: [_text(_relation_contact(s, t)["phone"], t),
                                     MemoryWrite(key="last_texted", value=t.params["person"])],
}


@pytest.mark.parametrize("case", sorted(MEMORY_CASES))
def test_memory_final_state_checker(case: str) -> None:
    assert _play("mem_text_relation", MEMORY_CASES[case]) == (1.0 if case == "right" else 0.0)


def _code(value: str) -> list[Any]:
    return [Finish(answer=value)]


ANSWER_CASES = {
    "right": lambda s, t: _code(t.params["code"]),
    "every_code": lambda s, t: _code(", ".join([t.params["code"], *t.params["others"]])),
    "answer_and_note": lambda s, t: [MemoryWrite(key="asked", value="locker"),
                                     *_code(t.params["code"])],
}


@pytest.mark.parametrize("case", sorted(ANSWER_CASES))
def test_memory_answer_checker(case: str) -> None:
    assert _play("mem_locker_code", ANSWER_CASES[case]) == (1.0 if case == "right" else 0.0)


def _meeting_args(state: Any, task: Any) -> dict[str, Any]:
    p = task.params
    return {"title": p["title"], "start": f"{p['date']}T{p['start']}",
            "end": f"{p['date']}T{p['end']}", "contact": p["person"]}


SKILL_CASES = {
    "right": lambda s, t: [UseSkill(skill="schedule_meeting", arguments=_meeting_args(s, t))],
    "near_miss_first": lambda s, t: [
        UseSkill(skill="block_time", arguments={k: v for k, v in _meeting_args(s, t).items()
                                                if k != "contact"}),
        UseSkill(skill="schedule_meeting", arguments=_meeting_args(s, t))],
    "right_twice": lambda s, t: [UseSkill(skill="schedule_meeting",
                                          arguments=_meeting_args(s, t))] * 2,
    "tools_without_the_skill": lambda s, t: [
        ToolCall(name="calendar.create_event", arguments={
            **{k: v for k, v in _meeting_args(s, t).items() if k != "contact"},
            "attendees": [t.params["person"]]}),
        ToolCall(name="messages.send", arguments={
            "contact": t.params["person"], "body": f"Invitation: {t.params['title']}."})],
    "every_skill": lambda s, t: [UseSkill(skill=name, arguments=_meeting_args(s, t))
                                 for name in ("schedule_meeting", "schedule_meeting_by_email",
                                              "block_time")],
}


@pytest.mark.parametrize("case", sorted(SKILL_CASES))
def test_skill_credit_follows_the_choice_and_wrong_tries_cost(case: str) -> None:
    assert _play("skill_schedule_meeting", SKILL_CASES[case]) == (1.0 if case == "right" else 0.0)


def _plan(*calls: tuple[str, dict[str, Any]], **context: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"tool_calls": [{"name": n, "arguments": a} for n, a in calls]}
    if context:
        out["context"] = context
    return out


def _friend(state: Any, task: Any) -> dict[str, Any]:
    return next(r for r in state.rows("contacts", "contacts") if r["name"] == task.params["person"])


def _message(state: Any, task: Any) -> tuple[str, dict[str, Any]]:
    return "messages.send", {"phone": _friend(state, task)["phone"],
                             "body": f"Try {task.params['place']} at {task.params['street']}"}


SUBAGENT_CASES = {
    "right": lambda s, t: [
        Delegate(agent="navigator", instruction="best place", arguments=_plan(
            ("maps.search_places", {"query": t.params["category"]}))),
        Delegate(agent="communicator", instruction="text it", arguments=_plan(
            _message(s, t), address=t.params["street"]))],
    "main_does_everything": lambda s, t: [
        ToolCall(name="maps.search_places", arguments={"query": t.params["category"]}),
        ToolCall(name=_message(s, t)[0], arguments=_message(s, t)[1])],
    "wrong_helper_for_the_lookup": lambda s, t: [
        Delegate(agent="communicator", instruction="text it", arguments=_plan(_message(s, t)))],
    "delegate_to_everyone": lambda s, t: [
        Delegate(agent="navigator", instruction="best place", arguments=_plan(
            ("maps.search_places", {"query": t.params["category"]}))),
        Delegate(agent="communicator", instruction="text it", arguments=_plan(_message(s, t))),
        Delegate(agent="scheduler", instruction="help", arguments=_plan(
            ("contacts.search", {"query": t.params["first"]})))],
}


@pytest.mark.parametrize("case", sorted(SUBAGENT_CASES))
def test_collaboration_checker(case: str) -> None:
    assert _play("sa_place_to_friend", SUBAGENT_CASES[case]) == (1.0 if case == "right" else 0.0)


BASELINES: dict[str, Callable[[], Any]] = {"noop": NoopPolicy, "random": RandomPolicy,
                                           "claim": ClaimPolicy, **ATTACKERS}


def _overall(report: dict[str, Any]) -> float:
    scores = list(report["templates"].values())
    return sum(scores) / len(scores)


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_public_baselines_stay_under_a_tenth_on_these_families(name: str) -> None:
    tasks = [t.generate("test", i, 0) for t in all_templates()
             if t.family in FAMILIES for i in range(2)]
    report = score_public(BASELINES[name], tasks)
    bound = 0.01 if name in ("noop", "random", "claim") else 0.10
    assert _overall(report) <= bound and all(report["family"][f] <= bound for f in FAMILIES)


def test_most_templates_need_a_lookup_tool_the_oracle_cannot_do_without() -> None:
    needing = [t.name for t in TEMPLATES if _read_tools(t)]
    assert len(needing) >= len(TEMPLATES) // 2, needing


class BestSkillGuess:
    """An attacker smarter than try-every-skill: one try, with the skill whose name and
    description share the most words with the goal, arguments copied from the goal."""

    name = "best_skill_guess"

    def begin(self, goal: str, catalogue: Any) -> None:
        from devices.suite.baselines import GoalReader, _overlap

        self.goal, self.reader, self.done = goal, GoalReader(goal), False
        self.skill = max(catalogue.skills, default=None, key=lambda s: _overlap(
            goal, f"{s.name.replace('_', ' ')} {s.description}"))

    def next_action(self, observation: Any) -> Any:
        from devices.suite.baselines import _now

        if self.done or self.skill is None:
            return Finish()
        self.done = True
        return UseSkill(skill=self.skill.name,
                        arguments=self.reader.arguments(self.skill.parameters, _now(observation)))


def test_a_one_try_skill_guesser_stays_under_a_tenth() -> None:
    tasks = [t.generate("test", i, 0) for t in TEMPLATES if t.family == "skills"
             for i in range(3)]
    report = score_public(BestSkillGuess, tasks)
    assert _overall(report) <= 0.10, {k: v for k, v in report["templates"].items() if v}
