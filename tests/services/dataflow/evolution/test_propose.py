"""Rule-based proposals: grouped failures plus solved trajectories give incremental deltas."""

from __future__ import annotations

from typing import Any

from schemas.actions import Delegate, Finish, ToolCall
from schemas.episodes import EpisodeEnded, Step
from schemas.observations import Observation, ToolResult
from schemas.verdicts import FailureTraced
from services.dataflow.evolution.delta import apply_changes, spec_version, with_version
from services.dataflow.evolution.propose import (
    Call,
    Success,
    distil_skill,
    group_traces,
    propose,
    success_from_episode,
    trace_of,
)
from tests.services.evolver.helpers import BASE_SPEC

SPEC = with_version(BASE_SPEC)
TOOLS = {"messages.send": {"description": "Send a text message.", "parameters": {
    "type": "object", "required": ["contact_id", "body"],
    "properties": {"contact_id": {"type": "string", "pattern": "^ct_[a-z0-9]+$"},
                   "body": {"type": "string"}}}}}


def failure(category: str, template: str = "text_relative", n: int = 0,
            **evidence: Any) -> FailureTraced:
    return FailureTraced(event_id=f"f-{category}-{template}-{n}", source="verifier/1",
                         correlation_id="run", episode_id=f"ep{n}", task_id=f"{template}#{n}",
                         family="tool", category=category, summary=f"{category} at step 1",
                         evidence={"template": template, **evidence})


def texting(person: str, contact_id: str, body: str) -> Success:
    return Success(task_id=f"t-{person}", template="text_relative",
                   goal=f"Text my sister that {body}.", calls=(
                       Call("contacts.search", {"query": person},
                            [{"id": contact_id, "name": person, "relation": "sister"}]),
                       Call("messages.send", {"contact_id": contact_id, "body": body},
                            {"message_id": "m1"})))


SOLVED = {"text_relative": [texting("Priya", "ct_81", "I'm late"),
                            texting("Hana", "ct_17", "dinner at seven")]}


def test_a_skill_is_distilled_with_parameters_and_earlier_step_results() -> None:
    skill = distil_skill("text_relative", SOLVED["text_relative"])
    assert skill is not None
    assert skill["name"] == "do_text_relative"
    assert [s["tool"] for s in skill["steps"]] == ["contacts.search", "messages.send"]
    assert skill["steps"][0]["arguments"] == {"query": "{query}"}
    # the contact id is never a parameter: the skill reads it from step 0's result
    assert skill["steps"][1]["arguments"] == {"contact_id": "{$0.0.id}", "body": "{body}"}
    assert skill["parameters"]["required"] == ["body", "query"]


def test_no_skill_from_disagreeing_or_single_examples() -> None:
    other = Success("t3", "text_relative", "x", (Call("messages.send", {"body": "hi"}),))
    assert distil_skill("text_relative", [SOLVED["text_relative"][0], other]) is None
    assert distil_skill("text_relative", SOLVED["text_relative"][:1]) is None
    same = [texting("Priya", "ct_81", "hi"), texting("Priya", "ct_81", "hi")]
    assert distil_skill("text_relative", same) is None  # nothing varies


def test_misroutes_give_a_skill_and_a_playbook_line_naming_their_failures() -> None:
    traces = [trace_of(failure("skill_misroute", n=i)) for i in range(3)]
    (proposal,) = propose(SPEC, traces, SOLVED)
    assert proposal.rule == "skill"
    assert proposal.base == SPEC["version"]
    assert proposal.motivated_by == tuple(sorted(t.event_id for t in traces))
    assert [(c.component, c.op, c.name) for c in proposal.changes] == [
        ("skill", "add", "do_text_relative"), ("prompt", "add", "use do_text_relative")]
    new = apply_changes(SPEC, proposal.changes)
    assert new["parent"] == SPEC["version"] and new["skills"][0]["name"] == "do_text_relative"
    # deterministic, and a proposal already made is not made again
    assert propose(SPEC, traces, SOLVED) == [proposal]
    assert propose(SPEC, traces, SOLVED, exclude=frozenset({proposal.proposal_id})) == []


def test_a_skill_with_other_steps_is_repaired_not_added() -> None:
    broken = {"name": "do_text_relative", "description": "old", "parameters": {},
              "steps": [{"tool": "messages.send", "arguments": {"body": "{body}"}, "when": None}],
              "defaults": {}, "derived": {}}
    spec = with_version({**SPEC, "skills": [broken]})
    traces = [trace_of(failure("incomplete", n=i)) for i in range(2)]
    (proposal,) = propose(spec, traces, SOLVED)
    assert (proposal.changes[0].op, proposal.changes[0].name) == ("update", "do_text_relative")
    assert len(apply_changes(spec, proposal.changes)["skills"][0]["steps"]) == 2


def test_argument_errors_clarify_the_tool_description() -> None:
    traces = [trace_of(failure("bad_arguments", n=i, tool="messages.send")) for i in range(2)]
    (proposal,) = propose(SPEC, traces, SOLVED, tools=TOOLS)
    (change,) = proposal.changes
    assert (change.component, change.op, change.name) == ("tool", "update", "messages.send")
    text = change.spec["description"]
    assert text.startswith("Send a text message.")
    assert "contact_id (required) string matching ^ct_[a-z0-9]+$" in text
    assert 'Example that worked: {"body":"I\'m late","contact_id":"ct_81"}' in text
    assert apply_changes(SPEC, proposal.changes)["tools"]["descriptions"]["messages.send"] == text


def test_memory_misses_change_the_memory_policy() -> None:
    traces = [trace_of(failure("memory_miss", "recall_address", n=i)) for i in range(2)]
    (proposal,) = propose(SPEC, traces, {})
    assert proposal.rule == "memory_policy"
    assert apply_changes(SPEC, proposal.changes)["memory"]["context_entries"] == 5
    shown = with_version({**SPEC, "memory": {**SPEC["memory"], "context_entries": 5}})
    (again,) = propose(shown, traces, {})
    assert apply_changes(shown, again.changes)["memory"]["top_k"] == 10


def test_other_failures_get_a_playbook_entry_from_a_solved_example() -> None:
    solved = {"plan_trip": [Success("t", "plan_trip", "Plan my trip to the cafe.",
                                    (Call("maps.search", {"q": "cafe"}),), ("navigator",))]}
    traces = [trace_of(failure("delegation_error", "plan_trip", n=i)) for i in range(2)]
    (proposal,) = propose(SPEC, traces, solved)
    assert proposal.rule == "playbook"
    assert proposal.changes[0].spec["text"] == (
        "For tasks like 'Plan my trip to the cafe.': maps.search; delegate to navigator.")


def test_noise_environment_faults_and_unsolved_groups_propose_nothing() -> None:
    one = [trace_of(failure("skill_misroute"))]
    assert propose(SPEC, one, SOLVED) == []  # below the support threshold
    faults = [trace_of(failure("device_failure", n=i)) for i in range(5)]
    assert group_traces(faults) == {}
    assert propose(SPEC, faults, SOLVED) == []
    unsolved = [trace_of(failure("wrong_answer", "count_events", n=i)) for i in range(3)]
    assert propose(SPEC, unsolved, SOLVED) == []


def test_traces_take_the_template_from_the_task_index_when_evidence_lacks_it() -> None:
    event = FailureTraced(source="verifier/1", correlation_id="r", episode_id="e", task_id="t9",
                          family="memory", category="memory_miss", summary="s",
                          evidence={"tool": "notes.search"})
    trace = trace_of(event, {"t9": "recall_note"})
    assert (trace.template, trace.app, trace.tool) == ("recall_note", "notes", "notes.search")
    assert trace_of(event).template == "unknown"
    # the verifier's evidence names the expected call at the first wrong step
    verified = event.model_copy(update={"evidence": {
        "taken": {"action_type": "finish"},
        "expected": {"action_type": "tool_call", "name": "contacts.search", "arguments": {}}}})
    assert trace_of(verified).tool == "contacts.search" and trace_of(verified).app == "contacts"
    blamed = event.model_copy(update={"environment_fault": True})
    assert trace_of(blamed).category == "environment_fault"
    assert group_traces([trace_of(blamed), trace_of(blamed)]) == {}


def test_successes_come_from_solved_episodes() -> None:
    def obs(i: int, result: ToolResult | None) -> Observation:
        return Observation(step=i, clock_ms=0, result=result)

    episode = EpisodeEnded(
        source="rollout/1", correlation_id="r", episode_id="e", task_id="t", device_id="sim-0",
        environment="sim", policy="oracle", outcome="finished", steps=[
            Step(index=0, action=ToolCall(name="contacts.search", arguments={"query": "P"}),
                 observation=obs(1, ToolResult(name="contacts.search", ok=True, value=[1]))),
            Step(index=1, action=ToolCall(name="contacts.delete", arguments={"id": "x"}),
                 observation=obs(2, ToolResult(name="contacts.delete", ok=False))),
            Step(index=2, action=Delegate(agent="communicator", instruction="text P"),
                 observation=obs(3, None)),
            Step(index=3, action=Finish(), observation=obs(4, None))])
    success = success_from_episode(episode, "text_relative", "Text P.")
    assert success.calls == (Call("contacts.search", {"query": "P"}, [1]),)  # failed call dropped
    assert success.delegations == ("communicator",)
    assert spec_version(SPEC) == SPEC["version"]
