"""The harness around a device: planner actions run here, device actions there; memory with
retrieval and forgetting; skills using earlier results; sub-agents running plans or their own
policy; final state; the context it shows."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from devices.harness.harness import Harness
from devices.harness.memory import rank
from devices.harness.spec import HarnessSpec, MemoryPolicy
from devices.sim.phone import SimPhone
from devices.suite.state_view import StateView
from schemas.actions import (
    Answer,
    Delegate,
    Finish,
    MemoryRead,
    MemoryWrite,
    OpenApp,
    ToolCall,
    UseSkill,
)
from tests.devices.sim.conftest import make_task

MEMORY = {"home_address": "12 Elm Road", "work_address": "1 Office Plaza",
          "note/2025-12-20": "Dinner with Priya at Casa Verde; she said her locker code is 4417.",
          "note/2025-12-22": "Booked the dentist for March.", "partner": "Sam Okafor"}


def test_a_bare_phone_refuses_planner_actions_unrun() -> None:
    phone = SimPhone()
    phone.reset(make_task())
    for action in (MemoryWrite(key="k", value="v"), Finish(answer="x"),
                   UseSkill(skill="travel_mode")):
        obs = phone.act(action)
        assert obs.result.error.code == "unsupported" and "Harness" in obs.result.error.message
        assert obs.step == 0 and not obs.done
    assert phone.state.settings["airplane_mode"] is False and phone.state.memory == {}


def test_memory_and_user_answers_stay_in_the_harness() -> None:
    harness = Harness(SimPhone())
    harness.reset(make_task({"memory": MEMORY, "user": {"answers": {"size": "M"}}}))
    assert harness.device.state.memory == {} and harness.device.state.user_answers == {}
    assert harness.act(MemoryRead(key="partner")).result.value["value"] == "Sam Okafor"


def test_lexical_retrieval_ranks_by_shared_words_and_keeps_top_k() -> None:
    assert [k for k, _ in rank("home address", MEMORY.items(), 5)] == [
        "home_address", "work_address"]
    assert [k for k, _ in rank("Priya's locker code", MEMORY.items(), 5)] == ["note/2025-12-20"]
    assert rank("weather in Oslo", MEMORY.items(), 5) == []
    harness = Harness(SimPhone(), HarnessSpec(memory=MemoryPolicy(top_k=1)))
    harness.reset(make_task({"memory": MEMORY}))
    assert list(harness.act(MemoryRead(query="address")).result.value) == ["home_address"]


def test_forgetting_is_writing_null() -> None:
    harness = Harness(SimPhone())
    harness.reset(make_task({"memory": MEMORY}))
    obs = harness.act(MemoryWrite(key="partner", value=None))
    assert obs.result.value["previous"] == "Sam Okafor"
    assert "partner" not in harness.final_state()["memory"]
    assert harness.act(MemoryRead(key="partner")).result.error.code == "not_found"


def test_a_skill_step_uses_an_earlier_steps_result() -> None:
    harness = Harness(SimPhone())
    harness.reset(make_task())
    obs = harness.act(UseSkill(skill="welcome_contact", arguments={
        "name": "Nia Obi", "phone": "+1-555-0100-2222", "message": "Welcome!"}))
    assert obs.result.ok, obs.result
    new_id = obs.result.value["steps"][0]["value"]["id"]
    assert harness.device.state.row("contacts", "contacts", new_id)["starred"] is True
    log = harness.final_state()["log"]
    assert [(e["kind"], e["name"]) for e in log] == [
        ("skill", "welcome_contact"), ("tool_call", "contacts.add"),
        ("tool_call", "contacts.star"), ("tool_call", "messages.send")]
    assert log[2]["arguments"] == {"id": new_id, "starred": True}


def test_delegation_carries_context_and_is_logged_as_the_sub_agent() -> None:
    harness = Harness(SimPhone())
    harness.reset(make_task())
    plan = {"context": {"when": "07:15"},
            "tool_calls": [{"name": "clock.set_alarm", "arguments": {"time": "07:15"}}]}
    obs = harness.act(Delegate(agent="scheduler", instruction="wake me", arguments=plan))
    assert obs.result.ok
    log = harness.final_state()["log"]
    assert log[0]["arguments"]["arguments"]["context"] == {"when": "07:15"}
    assert (log[1]["agent"], log[1]["parent"]) == ("scheduler", "scheduler")


def test_final_state_has_the_contract_shape_and_reads_as_a_state_view() -> None:
    harness = Harness(SimPhone())
    harness.reset(make_task({"memory": {"a": 1}}))
    harness.act(ToolCall(name="settings.set", arguments={"key": "wifi", "value": False}))
    harness.act(OpenApp(app_name="notes"))
    harness.act(Answer(text="done"))
    final = harness.final_state()
    assert set(final) == {"tables", "settings", "memory", "log", "answer", "goal_status",
                          "clock_ms"}
    view = StateView.from_json(final)
    assert view.settings["wifi"] is False and view.memory == {"a": 1} and view.answer == "done"
    assert [(e.kind, e.name, e.ok) for e in view.log] == [
        ("tool_call", "settings.set", True), ("gui", "open_app", True), ("answer", "answer", True)]
    assert "contacts" in final["tables"] and final["tables"]["contacts"]["contacts"]


def test_a_kept_final_state_is_a_copy_and_a_shared_one_reads_the_same() -> None:
    """`final_state()` is the episode's record: later writes must not reach into it. The
    scorer's `copy=False` read is the same JSON, sharing the live rows."""
    harness = Harness(SimPhone())
    harness.reset(make_task({"memory": {"a": {"b": 1}}}))
    harness.act(ToolCall(name="contacts.add", arguments={"name": "Ada", "phone": "+1-555-0100"}))
    kept, shared = harness.final_state(), harness.final_state(copy=False)
    assert kept == shared
    row_id, row = next((i, r) for i, r in shared["tables"]["contacts"]["contacts"].items()
                       if r["name"] == "Ada")
    live = harness.device.state._tables["contacts.contacts"][row_id]
    assert row is live and kept["tables"]["contacts"]["contacts"][row_id] is not live
    live["name"] = "Bea"  # a write in place, as any app may make
    harness.state.memory["a"]["b"] = 2
    assert shared["tables"]["contacts"]["contacts"][row_id]["name"] == "Bea"
    assert kept["tables"]["contacts"]["contacts"][row_id]["name"] == "Ada"
    assert kept["memory"] == {"a": {"b": 1}} and shared["memory"] == {"a": {"b": 2}}


def test_snapshot_restore_and_fork_carry_the_harness_state() -> None:
    harness = Harness(SimPhone())
    harness.reset(make_task({"memory": {"a": 1}}))
    snap = harness.snapshot()
    harness.act(MemoryWrite(key="a", value=2))
    twin = harness.fork()
    harness.restore(snap)
    assert harness.final_state()["memory"] == {"a": 1} and harness.final_state()["log"] == []
    assert twin.final_state()["memory"] == {"a": 2}


def test_the_step_limit_ends_the_episode_on_a_planner_step() -> None:
    harness = Harness(SimPhone())
    harness.reset(make_task(max_steps=2))
    harness.act(MemoryWrite(key="a", value=1))
    obs = harness.act(MemoryWrite(key="b", value=2))
    assert obs.done
    assert harness.act(MemoryRead(key="a")).result.error.code == "conflict"


def test_context_shows_memory_up_front_the_task_tools_and_every_step_in_order() -> None:
    spec = HarnessSpec.default().model_copy(update={"memory": MemoryPolicy(context_entries=3)})
    harness = Harness(SimPhone(), spec)
    harness.reset(make_task({"memory": MEMORY}).model_copy(
        update={"goal": "Ship the parcel to my home address", "apps": ["shopping"]}))
    harness.act(ToolCall(name="shopping.view_cart"))
    harness.act(MemoryRead(query="home"))
    messages = json.loads(harness.context())
    header = messages[0]["content"]
    assert header.startswith("Goal: Ship the parcel to my home address")
    assert "home_address" in header.split("Memory:")[1]
    assert "checkout(address)" in header and "contacts:" not in header
    calls = [m["tool_calls"][0]["function"] for m in messages if m["role"] == "assistant"]
    assert [c["name"] for c in calls] == ["tool_call", "memory_read"]  # oldest first, none dropped
    assert harness.context_messages() == messages
    # without memory up front (the default) the policy must read memory itself
    plain = Harness(SimPhone())
    plain.reset(make_task({"memory": MEMORY}).model_copy(update={"apps": ["shopping"]}))
    assert "Memory:" not in plain.context_header()


class _Helper:
    """A sub-agent policy: records what it was told, calls tools from its catalogue, answers."""

    seen: ClassVar[list[tuple[str, list[str]]]] = []

    def __init__(self, agent: str, script: list[Any]) -> None:
        self.name, self.script = agent, list(script)

    def begin(self, goal: str, catalogue: Any) -> None:
        _Helper.seen.append((goal, [t.name for t in catalogue.tools]))

    def next_action(self, observation: Any) -> Any:
        if observation.result is not None and observation.result.ok and not self.script:
            return Answer(text=str(observation.result.value["id"]))
        return self.script.pop(0) if self.script else Answer(text="nothing found")


def test_a_sub_agent_can_run_its_own_policy_with_its_own_context_and_tools() -> None:
    script = [ToolCall(name="messages.send", arguments={"contact": "Bob Martinez", "body": "x"}),
              ToolCall(name="clock.set_alarm", arguments={"time": "06:10"})]
    harness = Harness(SimPhone(), subagent_policy=lambda agent: _Helper(agent, script))
    harness.reset(make_task())
    _Helper.seen.clear()
    obs = harness.act(Delegate(agent="scheduler", instruction="Wake me early.",
                               arguments={"context": {"time": "06:10"}}))
    assert obs.result.ok and obs.step == 1
    goal, tools = _Helper.seen[0]
    assert "Wake me early." in goal and '"06:10"' in goal
    assert tools and all(t.split(".")[0] in ("calendar", "clock", "contacts") for t in tools)
    value = obs.result.value
    assert [r["ok"] for r in value["results"]] == [False, True]
    alarm_id = value["results"][1]["value"]["id"]
    assert value["answer"] == alarm_id and harness.device.state.row("clock", "alarms", alarm_id)
    log = harness.final_state()["log"]
    assert [(e["kind"], e["name"], e["agent"], e["ok"]) for e in log] == [
        ("delegate", "scheduler", "main", True),
        ("tool_call", "messages.send", "scheduler", False),
        ("tool_call", "clock.set_alarm", "scheduler", True)]
    assert not any(m["body"] == "x" for m in harness.device.state.rows("messages", "messages"))


def test_a_sub_agent_that_never_answers_fails_the_delegation() -> None:
    class Stalling:
        name = "stall"

        def begin(self, goal: str, catalogue: Any) -> None: ...

        def next_action(self, observation: Any) -> Any:
            return ToolCall(name="clock.list_alarms")

    spec = HarnessSpec.default()
    harness = Harness(SimPhone(), spec, subagent_policy=lambda agent: Stalling())
    harness.reset(make_task())
    obs = harness.act(Delegate(agent="scheduler", instruction="loop"))
    assert obs.result.error.code == "timeout"
    assert len(obs.result.value["results"]) == spec.delegation.max_steps
    assert harness.final_state()["log"][0]["ok"] is False


def test_only_a_harness_on_a_bounded_phone_without_sub_agent_policies_is_bounded() -> None:
    """A rollout skips its timeout thread only where no call can block."""
    from devices.protocol import declares_bounded_calls

    class Waiting(SimPhone):  # a subclass may wait in a call: it does not inherit the promise
        pass

    assert declares_bounded_calls(SimPhone()) and declares_bounded_calls(Harness(SimPhone()))
    assert not declares_bounded_calls(Waiting()) and not declares_bounded_calls(Harness(Waiting()))
    assert not declares_bounded_calls(Harness(SimPhone(), subagent_policy=lambda name: None))
    assert not declares_bounded_calls(object())
