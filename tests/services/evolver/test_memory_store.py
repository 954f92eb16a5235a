"""What to store: MemoryPolicy.store, the harness storing tool results by itself, and the
evolver's rule that proposes it from memory-family failures whose needed fact was seen earlier
in the episode but not stored.

The policy is the scripted oracle without a working memory of its own (a stand-in for a
language model whose context has lost an earlier result): a tool result reaches it only
through the harness's memory. Under the built-in spec it fails; under the proposed spec the
same tasks on the same seeds pass."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from devices.blobs import BlobStore
from devices.harness.harness import Harness
from devices.harness.planner import tool_error
from devices.harness.spec import SEEN_PREFIX, HarnessSpec, MemoryPolicy, SpecError
from devices.sim import SimPhone
from devices.suite.policies import NoopPolicy
from devices.suite.registry import templates_for
from schemas.actions import Finish, MemoryRead, ToolCall
from schemas.observations import ToolResult
from schemas.verdicts import FailureTraced, VerdictIssued
from services.dataflow.evolution.delta import apply_delta, spec_version
from services.dataflow.evolution.propose import propose, trace_of
from services.dataflow.ids import derived_id
from services.dataflow.tasks import ScriptedOracle, instance_of, new_harness, task_event
from services.rollout.engine import Rollout
from services.verifier.decide import VerifierState, World
from services.verifier.decide import decide as verify_episode
from services.verifier.decide import evolve as verifier_evolve

#: A memory-family template: the relation's first name and employer come from memory, the
#: contact from contacts.search, whose result the message then needs (the contact's id).
TEMPLATE = "mem_text_relation"
INSTANCES = 4


class ForgetfulOracle(ScriptedOracle):
    """The oracle, except that it never keeps a tool result itself: after each tool call it
    reads the note the harness stored (`note/seen/<tool>`) and acts on that, or on nothing."""

    name = "forgetful-oracle"

    def __init__(self) -> None:
        super().__init__()
        self._tool: str | None = None
        self._asked = False

    def begin(self, goal: str, catalogue: Any) -> None:
        super().begin(goal, catalogue)
        self._tool, self._asked = None, False

    def next_action(self, observation: Any) -> Any:
        if self._tool is not None and not self._asked:
            self._asked = True
            return MemoryRead(key=f"{SEEN_PREFIX}{self._tool}")
        if self._asked:
            read = observation.result
            result = (ToolResult(name=self._tool, ok=True, value=read.value["value"])
                      if read is not None and read.ok else
                      tool_error(self._tool, "forgotten", "the result was not kept"))
            observation = observation.model_copy(update={"result": result})
            self._tool, self._asked = None, False
        try:
            action = super().next_action(observation)
        except (LookupError, ValueError, TypeError, RuntimeError):
            return Finish()  # what it needed is gone
        if isinstance(action, ToolCall):
            self._tool = action.name
        return action


def _tasks() -> list[Any]:
    template = next(t for t in templates_for("train") if t.name == TEMPLATE)
    out = []
    for i in range(INSTANCES):
        task = template.generate("train", i, 0)
        out.append(task_event(task, tier="easy", event_id=derived_id("test-task", task.task_id),
                              source="test/0", correlation_id=task.task_id))
    return out


def _run(spec: HarnessSpec, tasks: list[Any], blobs: Path
         ) -> list[tuple[Any, VerdictIssued, FailureTraced | None]]:
    """Each task's episode under `spec` with the forgetful oracle, its verdict and trace."""
    rollout = Rollout(Harness(SimPhone("mem-sim"), spec), ForgetfulOracle(), "forgetful-oracle",
                      BlobStore(blobs))
    verifier = VerifierState()
    world = World(BlobStore(blobs), new_harness("v"))
    out = []
    try:
        for task in tasks:
            verifier = verifier_evolve(verifier, task)
            _, ended = rollout.run(task)
            events = verify_episode(verifier, ended, world)
            verdict = next(e for e in events if isinstance(e, VerdictIssued))
            failure = next((e for e in events if isinstance(e, FailureTraced)), None)
            out.append((ended, verdict, failure))
    finally:
        rollout.close()
    return out


def test_an_empty_store_keeps_every_earlier_specs_version() -> None:
    spec = HarnessSpec.default()
    data = spec.to_json_dict()
    assert "store" not in data["memory"]  # left out while empty ...
    body = {k: v for k, v in data.items() if k not in ("version", "parent")}
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"),
                                       ensure_ascii=False).encode()).hexdigest()[:12]
    assert spec.version == digest == spec_version(data)  # ... so the hash is the old one
    assert HarnessSpec.from_json_dict(data).version == spec.version
    storing = spec.model_copy(update={"memory": MemoryPolicy(store=("contacts.search",))})
    assert storing.version != spec.version
    again = HarnessSpec.from_json_dict(json.loads(json.dumps(storing.to_json_dict())))
    assert again.memory.store == ("contacts.search",) and again.version == storing.version
    assert again.memory.stores("contacts.search") and not again.memory.stores("contacts.get")
    assert MemoryPolicy(store=("contacts.*",)).stores("contacts.get")
    with pytest.raises(SpecError, match="memory.store"):
        HarnessSpec.from_json_dict({**data, "memory": {"store": ["rm -rf /"]}})


def test_the_harness_stores_what_its_policy_names_outside_the_users_memory() -> None:
    task = instance_of(_tasks()[0])
    for store, kept in (((), False), (("contacts.search",), True)):
        spec = HarnessSpec.default().model_copy(update={"memory": MemoryPolicy(store=store)})
        harness = Harness(SimPhone("mem"), spec)
        harness.reset(task)
        before = harness.final_state()["memory"]
        found = harness.act(ToolCall(name="contacts.search", arguments={"query": "a"}))
        assert found.result is not None and found.result.ok
        read = harness.act(MemoryRead(key=f"{SEEN_PREFIX}contacts.search"))
        assert read.result is not None and read.result.ok is kept
        if kept:
            assert read.result.value["value"] == found.result.value
            hits = harness.act(MemoryRead(query="contacts search")).result
            assert f"{SEEN_PREFIX}contacts.search" in hits.value
        # The user's memory (what checkers diff) is untouched either way.
        assert harness.final_state()["memory"] == before


def test_a_memory_failure_whose_fact_was_seen_but_not_stored_gets_a_store_proposal_that_fixes_it(
        tmp_path: Path) -> None:
    tasks = _tasks()
    default = HarnessSpec.default()
    before = _run(default, tasks, tmp_path / "before")
    assert not any(v.passed for _, v, _ in before), "the forgetful oracle fails without storing"
    failures = [f for _, _, f in before if f is not None]
    assert len(failures) == INSTANCES
    assert {f.family for f in failures} == {"memory"}
    traces = [trace_of(f, {t.task_id: TEMPLATE for t in tasks}, e)
              for (e, _, f) in before if f is not None]
    assert all(t.seen_in == ("contacts.search",) for t in traces)

    spec_json = default.to_json_dict()
    proposals = propose(spec_json, traces, {})
    stored = [p for p in proposals if p.rule == "memory_store"]
    assert len(stored) == 1
    proposal = stored[0]
    assert [c.model_dump(mode="json") for c in proposal.changes] == [
        {"component": "memory", "op": "add", "name": "store", "spec": {"value": ["contacts.search"]}}]
    assert set(proposal.motivated_by) == {f.event_id for f in failures}
    assert "contacts.search" in proposal.rationale

    candidate = HarnessSpec.from_json_dict(apply_delta(spec_json, list(proposal.changes)))
    assert candidate.memory.store == ("contacts.search",) and candidate.parent == default.version
    after = _run(candidate, tasks, tmp_path / "after")
    assert all(v.passed for _, v, _ in after), [v.details for _, v, _ in after]
    assert {e.harness for e, _, _ in after} == {candidate.version}
    # Back on the old spec, the same seeds fail the same way (nothing leaks between specs).
    again = _run(default, tasks, tmp_path / "again")
    assert [(e.event_id, v.score) for e, v, _ in again] == \
        [(e.event_id, v.score) for e, v, _ in before]

    # Already stored: no second store proposal (the older memory rules answer instead).
    assert not [p for p in propose(candidate.to_json_dict(), traces, {})
                if p.rule == "memory_store"]


def test_failures_that_never_saw_the_fact_get_no_store_proposal(tmp_path: Path) -> None:
    """The noop policy fails the same tasks without having looked anything up: storing would
    not help, so the rule stays silent."""
    tasks = _tasks()
    rollout = Rollout(SimPhone("noop-sim"), NoopPolicy(), "noop", BlobStore(tmp_path))
    verifier, world = VerifierState(), World(BlobStore(tmp_path), new_harness("v"))
    traces = []
    for task in tasks:
        verifier = verifier_evolve(verifier, task)
        _, ended = rollout.run(task)
        failure = next(e for e in verify_episode(verifier, ended, world)
                       if isinstance(e, FailureTraced))
        traces.append(trace_of(failure, {task.task_id: TEMPLATE}, ended))
    rollout.close()
    assert traces and all(t.seen_in == () for t in traces)
    assert not [p for p in propose(HarnessSpec.default().to_json_dict(), traces, {})
                if p.rule == "memory_store"]
