"""The catalogue: tools of the task's apps only, described as the spec says; the harness refuses
what the catalogue does not show."""

from __future__ import annotations

from devices.harness.catalogue import build_catalogue, is_write_tool
from devices.harness.harness import Harness
from devices.harness.spec import HarnessSpec, ToolPolicy
from devices.sim.phone import SimPhone
from devices.sim.tools import REGISTRY
from schemas.actions import Delegate, ToolCall, UseSkill
from tests.devices.sim.conftest import make_task

TOOLS = {name: t.spec for name, t in REGISTRY.items()}


def test_tools_are_filtered_to_the_apps_with_schemas_and_descriptions() -> None:
    catalogue = build_catalogue(HarnessSpec.default(), TOOLS, ["clock", "settings"])
    assert {t.app for t in catalogue.tools} == {"clock", "settings"}
    alarm = catalogue.tool("clock.set_alarm")
    assert alarm is not None and alarm.writes and "time" in alarm.parameters["properties"]
    assert not catalogue.tool("clock.list_alarms").writes
    # Skills appear only when every step's tool is shown; sub-agents list only shown tools.
    names = {s.name for s in catalogue.skills}
    assert {"bedtime_mode", "focus_mode", "nap_mode"} <= names
    assert "schedule_meeting" not in names and "share_photo" not in names
    scheduler = next(a for a in catalogue.subagents if a.name == "scheduler")
    assert scheduler.tools and all(t.startswith("clock.") for t in scheduler.tools)
    assert "navigator" not in {a.name for a in catalogue.subagents}


def test_no_apps_means_every_tool() -> None:
    catalogue = build_catalogue(HarnessSpec.default(), TOOLS)
    assert len(catalogue.tools) == len(TOOLS)


def test_the_spec_hides_and_rewords_tools() -> None:
    spec = HarnessSpec(tools=ToolPolicy(hidden=("contacts.delete",),
                                        descriptions={"contacts.add": "Make a new person."}))
    catalogue = build_catalogue(spec, TOOLS, ["contacts"])
    assert catalogue.tool("contacts.delete") is None
    assert catalogue.tool("contacts.add").description == "Make a new person."


def test_write_tools_are_told_from_read_tools() -> None:
    assert [is_write_tool(n) for n in ("notes.search", "maps.eta", "email.list",
                                       "notes.create", "contacts.star", "settings.toggle")] == [
        False, False, False, True, True, True]


def test_the_harness_refuses_tools_outside_the_catalogue() -> None:
    harness = Harness(SimPhone())
    harness.reset(make_task().model_copy(update={"apps": ["clock"]}))
    before = len(harness.device.state.rows("contacts", "contacts"))
    obs = harness.act(ToolCall(name="contacts.add", arguments={"name": "X", "phone": "+1"}))
    assert obs.result.error.code == "unknown_tool" and obs.step == 1
    # Neither a skill nor a sub-agent gets around the catalogue.
    skill = harness.act(UseSkill(skill="welcome_contact", arguments={
        "name": "X", "phone": "+1-555-0100-0000", "message": "hi"}))
    assert not skill.result.ok and skill.result.error.code == "unknown_tool"
    plan = {"tool_calls": [{"name": "contacts.add", "arguments": {"name": "X", "phone": "+1"}}]}
    delegated = harness.act(Delegate(agent="scheduler", instruction="add", arguments=plan))
    assert delegated.result.error.code == "unknown_tool"
    assert len(harness.device.state.rows("contacts", "contacts")) == before
    assert harness.act(ToolCall(name="clock.set_alarm", arguments={"time": "07:00"})).result.ok
