"""Planner actions in the harness (on a SimPhone): memory, skills, delegation, ask_user, answer,
finish and status."""

from __future__ import annotations

from devices.harness.harness import Harness
from devices.harness.skills import SKILLS
from devices.harness.subagents import SUBAGENTS
from devices.sim.phone import SimPhone
from schemas.actions import (
    Answer,
    AskUser,
    Delegate,
    Finish,
    MemoryRead,
    MemoryWrite,
    Status,
    ToolCall,
    UseSkill,
)
from tests.devices.sim.conftest import make_task


def test_memory_write_then_read_by_key_and_query(phone: Harness) -> None:
    phone.act(MemoryWrite(key="home_address", value="1 Home St"))
    phone.act(MemoryWrite(key="diet", value={"vegetarian": True}))
    assert phone.state.memory == {"home_address": "1 Home St", "diet": {"vegetarian": True}}
    assert phone.act(MemoryRead(key="home_address")).result.value == {"key": "home_address",
                                                                        "value": "1 Home St"}
    assert phone.act(MemoryRead(query="HOME")).result.value == {"home_address": "1 Home St"}
    assert set(phone.act(MemoryRead(query="vegetarian")).result.value) == {"diet"}
    missing = phone.act(MemoryRead(key="shoe_size"))
    assert missing.result.error.code == "not_found"
    assert [e.kind for e in phone.state.log] == ["memory_write"] * 2 + ["memory_read"] * 4
    assert [e.ok for e in phone.state.log][-1] is False


def test_memory_from_earlier_sessions_is_loaded() -> None:
    phone = Harness(SimPhone())
    phone.reset(make_task({"memory": {"gym_day": "thursday"}}))
    assert phone.act(MemoryRead(query="gym")).result.value == {"gym_day": "thursday"}


def test_skill_runs_its_steps_and_logs_them_under_the_skill(phone: Harness) -> None:
    obs = phone.act(UseSkill(skill="schedule_meeting", arguments={
        "title": "Sync", "start": "2026-01-06T10:00", "end": "2026-01-06T10:30", "contact": "Grace Liu"}))
    assert obs.result.ok, obs.result
    assert [s["name"] for s in obs.result.value["steps"]] == ["calendar.create_event", "messages.send"]
    event = next(r for r in phone.device.state.rows("calendar", "events") if r["title"] == "Sync")
    assert event["attendees"] == ["Grace Liu"] and event["location"] == ""
    message = phone.device.state.rows("messages", "messages")[-1]
    assert message["contact"] == "Grace Liu" and message["body"] == "Invitation: Sync on 2026-01-06T10:00."
    log = phone.state.log
    assert (log[0].kind, log[0].name, log[0].ok, log[0].parent) == ("skill", "schedule_meeting", True, None)
    assert [(e.kind, e.name, e.parent) for e in log[1:]] == [
        ("tool_call", "calendar.create_event", "schedule_meeting"),
        ("tool_call", "messages.send", "schedule_meeting")]


def test_skill_optional_steps_and_derived_arguments(phone: Harness) -> None:
    phone.act(UseSkill(skill="focus_mode", arguments={"minutes": 25}))
    assert phone.device.state.settings["do_not_disturb"] is True and phone.device.state.settings["airplane_mode"] is False
    assert phone.device.state.rows("clock", "timers")[-1]["seconds"] == 1500
    phone.act(UseSkill(skill="bedtime_mode", arguments={"wake_time": "06:45", "brightness": 5}))
    assert phone.device.state.settings["brightness"] == 5


def test_skill_failures_are_typed(phone: Harness) -> None:
    assert phone.act(UseSkill(skill="fly")).result.error.code == "not_found"
    bad = phone.act(UseSkill(skill="share_photo", arguments={"file_id": "f1"}))
    assert bad.result.error.code == "bad_arguments" and "'contact'" in bad.result.error.message
    failing = phone.act(UseSkill(skill="share_photo", arguments={"file_id": "f1", "contact": "Nobody",
                                                                 "tag": "x"}))
    assert failing.result.error.code == "not_found" and len(failing.result.value["steps"]) == 2
    assert phone.state.log[-3].kind == "skill" and phone.state.log[-3].ok is False


def test_every_skill_step_names_a_real_tool(phone: Harness) -> None:
    for skill in SKILLS.values():
        assert skill.steps and all(step.tool in phone.tools for step in skill.steps), skill.name


def test_delegate_runs_the_plan_as_the_sub_agent(phone: Harness) -> None:
    obs = phone.act(Delegate(agent="scheduler", instruction="set my alarms", arguments={"tool_calls": [
        {"name": "clock.set_alarm", "arguments": {"time": "07:00"}},
        {"name": "calendar.list_events", "arguments": {"date": "2026-01-02"}}]}))
    assert obs.result.ok and [r["ok"] for r in obs.result.value["results"]] == [True, True]
    assert len(obs.result.value["results"][1]["value"]) == 2
    log = phone.state.log
    assert (log[0].kind, log[0].name, log[0].ok) == ("delegate", "scheduler", True)
    assert all(e.agent == "scheduler" and e.parent == "scheduler" for e in log[1:])


def test_delegate_outside_the_sub_agents_apps_is_permission_denied(phone: Harness) -> None:
    obs = phone.act(Delegate(agent="navigator", instruction="text Bob", arguments={"tool_calls": [
        {"name": "maps.search_places", "arguments": {"query": "cafe"}},
        {"name": "messages.send", "arguments": {"contact": "Bob Martinez", "body": "hi"}}]}))
    assert not obs.result.ok and obs.result.error.code == "permission_denied"
    assert [r["ok"] for r in obs.result.value["results"]] == [True, False]
    assert not any(m["body"] == "hi" for m in phone.device.state.rows("messages", "messages"))
    denied = phone.state.log[-1]
    assert (denied.name, denied.ok, denied.agent) == ("messages.send", False, "navigator")


def test_delegate_bad_plans_and_unknown_agents(phone: Harness) -> None:
    assert phone.act(Delegate(agent="ghost", instruction="x")).result.error.code == "not_found"
    bad = phone.act(Delegate(agent="shopper", instruction="x", arguments={"calls": []}))
    assert bad.result.error.code == "bad_arguments"
    assert set(SUBAGENTS) >= {"scheduler", "communicator", "navigator", "shopper"}


def test_ask_user_answers_by_keyword() -> None:
    phone = Harness(SimPhone())
    phone.reset(make_task({"user": {"answers": {"address": "1 Home St"}}}))
    assert phone.act(AskUser(question="What is your delivery ADDRESS?")).result.value == "1 Home St"
    assert phone.act(AskUser(question="Favourite film?")).message == "I don't know."
    assert [(e.kind, e.ok) for e in phone.state.log] == [("ask_user", True), ("ask_user", False)]


def test_answer_finish_and_status(phone: Harness) -> None:
    phone.act(Answer(text="three"))
    assert phone.state.answer == "three" and not phone.observe().done
    obs = phone.act(Finish(answer="four"))
    assert obs.done and phone.state.answer == "four"
    assert phone.act(ToolCall(name="clock.now")).result.error.code == "conflict"
    other = Harness(SimPhone())
    assert other.act(Status(goal_status="infeasible")).done
    assert other.state.goal_status == "infeasible" and other.state.answer is None
