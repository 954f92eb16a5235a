"""The real-device subset through the CLI, the real adb server and the stock fake phone: the
oracle scores 1, noop scores 0, and checkers read the phone (over-acting and bare claims fail)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from devices.adb.phone import AdbPhone
from devices.adb.suite import (
    DEVICE_TEMPLATES,
    DeviceOracle,
    Expect,
    check_change,
    device_tasks,
    evaluate_on_device,
)
from devices.harness.harness import Harness
from devices.harness.spec import HarnessSpec, ToolPolicy
from schemas.actions import Action, Answer, Finish, ToolCall
from schemas.observations import Observation
from services.cli.main import app
from tests.devices.fake_adbd import FakeAdbd, RealAdbServer
from tests.devices.harness import external_policy

runner = CliRunner()


@pytest.fixture
def adb_env(monkeypatch: pytest.MonkeyPatch, adb_server: RealAdbServer, adbd: FakeAdbd,
            tmp_path: Path) -> None:
    monkeypatch.setenv("FLYWHEEL_ADB_PORT", str(adb_server.port))
    monkeypatch.setenv("FLYWHEEL_ADB_SERIAL", adbd.serial)
    monkeypatch.setenv("FLYWHEEL_ADB_BLOB_DIR", str(tmp_path / "blobs"))
    monkeypatch.setenv("FLYWHEEL_ADB_WAIT_SCALE", "0")
    monkeypatch.setenv("FLYWHEEL_ADB_SCREENSHOTS", "false")


def test_devices_list_shows_the_phone_the_real_server_attached(adb_env: None,
                                                               adbd: FakeAdbd) -> None:
    result = runner.invoke(app, ["devices", "list", "--json"])
    assert result.exit_code == 0, result.output
    phones = [d for d in json.loads(result.output)["devices"] if d["kind"] == "adb"]
    assert [(d["device_id"], d["state"]) for d in phones] == [(adbd.serial, "device")]


@pytest.mark.parametrize(("policy", "expected"), [("oracle", 1.0), ("noop", 0.0), ("claim", 0.0)])
def test_suite_eval_on_the_device(adb_env: None, policy: str, expected: float) -> None:
    """Three instances of every real-device template, each on a phone reset in between."""
    result = runner.invoke(app, ["suite", "eval", "--device", "adb", "--policy", policy,
                                 "--n", "3", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["faults"] == 0
    assert report["overall"] == expected
    assert set(report["template_scores"]) == {t.name for t in DEVICE_TEMPLATES}
    assert len(report["episodes"]) == 3 * len(DEVICE_TEMPLATES)
    assert all(score == expected for score in report["template_scores"].values())


def test_random_policy_is_refused_in_one_sentence(adb_env: None) -> None:
    result = runner.invoke(app, ["suite", "eval", "--device", "adb", "--policy", "random"])
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and "use oracle, noop, claim or MODULE:CLASS" in said
    assert "Traceback" not in result.output


def test_an_outside_policy_runs_on_the_device_inside_the_harness(
        adb_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--policy MODULE:CLASS` on the phone: the policy, in a process of its own, gets the goal
    and a catalogue of the task's apps only (never the task), and reading without acting scores 0."""
    monkeypatch.setenv(external_policy.SEEN_FILE_ENV, str(tmp_path / "seen.jsonl"))
    result = runner.invoke(app, ["suite", "eval", "--device", "adb", "--policy",
                                 "tests.devices.harness.external_policy:CatalogueReader",
                                 "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["policy"] == "catalogue-reader" and len(report["harness_version"]) == 12
    assert report["overall"] == 0.0 and report["faults"] == 0
    seen = external_policy.seen(tmp_path / "seen.jsonl")
    assert len(seen) == len(DEVICE_TEMPLATES)
    assert all(s[:2] == ("str", "Catalogue") and s[2] > 0 for s in seen)


def test_a_saved_harness_spec_is_the_one_the_phone_runs_in(adb_env: None,
                                                           tmp_path: Path) -> None:
    """`--harness FILE` reaches the device: a spec hiding contacts.add is named in the report,
    and the oracle can no longer add a contact (its call is refused unrun)."""
    spec = HarnessSpec.default().model_copy(update={"tools": ToolPolicy(hidden=("contacts.add",))})
    path = spec.save(tmp_path / "spec.json")
    result = runner.invoke(app, ["suite", "eval", "--device", "adb", "--policy", "oracle",
                                 "--harness", str(path), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["harness_version"] == spec.version != HarnessSpec.default().version
    assert report["template_scores"]["stock_contact_add"] == 0.0
    assert report["template_scores"]["stock_contact_delete"] == 1.0
    missing = runner.invoke(app, ["suite", "eval", "--device", "adb", "--policy", "oracle",
                                  "--harness", str(tmp_path / "nope.json")])
    assert missing.exit_code == 2 and "does not exist" in " ".join(missing.output.split())


def test_the_harness_shows_only_the_tasks_apps_on_the_phone(phone: AdbPhone) -> None:
    harness = Harness(phone)
    for template in ("stock_alarm_set", "stock_contact_lookup"):
        task = next(t for t in device_tasks(1) if t.template == template)
        harness.reset(task)
        shown = {t.app for t in harness.catalogue().tools}
        assert shown == set(task.apps) and len(shown) == 1
    assert harness.act(ToolCall(name="settings.toggle", arguments={"key": "wifi"})).result \
        .error.code == "unknown_tool"  # not in a contacts task's catalogue: refused unrun
    assert phone.device_state()["settings"]["wifi"] is True


#: One extra write per app, each a change the task did not ask for.
_EXTRA_WRITES = (
    ToolCall(name="settings.toggle", arguments={"key": "wifi"}),
    ToolCall(name="contacts.add", arguments={"name": "Extra Person", "phone": "+1-555-444-0000"}),
    ToolCall(name="clock.set_alarm", arguments={"time": "04:44"}),
)


class _OverActing(DeviceOracle):
    """Solves the task, then also writes once more with a tool its catalogue shows (the task's
    own app): an extra write the checker must catch."""

    def begin(self, goal: str, catalogue: object = None) -> None:
        shown = {t.name for t in getattr(catalogue, "tools", [])}
        self._extra = next(a for a in _EXTRA_WRITES if a.name in shown)
        self._done_extra = False

    def next_action(self, observation: Observation) -> Action:
        action = super().next_action(observation)
        if isinstance(action, Finish) and not self._done_extra:
            self._done_extra = True
            return self._extra
        return action


class _Claimer:
    """Claims success without doing anything."""

    name = "claimer"

    def begin(self, goal: str, catalogue: object = None) -> None:
        self.said = False

    def next_action(self, observation: Observation) -> Action:
        if not self.said:
            self.said = True
            return Answer(text="Done! Everything is set, +1-555-000-0000.")
        return Finish()


def test_over_acting_and_claims_score_zero(phone: AdbPhone) -> None:
    tasks = [t for t in device_tasks(1) if t.template in (
        "stock_contact_add", "stock_gui_dark_theme", "stock_alarm_set")]
    over = evaluate_on_device(phone, _OverActing(), tasks=tasks)
    assert over.overall == 0.0
    said = {e.template: " ".join(e.violations) for e in over.episodes}
    assert "contact Extra Person added" in said["stock_contact_add"]
    assert "setting wifi changed" in said["stock_gui_dark_theme"]
    assert "alarm 04:44 set" in said["stock_alarm_set"]
    assert evaluate_on_device(phone, _Claimer(), tasks=tasks).overall == 0.0


def _state(contacts: dict[str, dict[str, object]], alarms: tuple[str, ...] = (),
           **settings: object) -> dict[str, object]:
    return {"tables": {"contacts": {"contacts": contacts},
                       "clock": {"alarms": {f"al{t}": {"id": f"al{t}", "time": t}
                                            for t in alarms}, "timers": {}}},
            "settings": {"wifi": True, **settings}, "answer": None}


def test_check_change_is_a_whole_state_diff() -> None:
    mum = {"id": "1", "name": "Mum", "phone": "+1", "starred": False}
    ava = {"id": "2", "name": "Ava", "phone": "+2", "starred": False}
    before = _state({"1": mum, "2": ava})
    expect = Expect(contacts_removed=("Ava",))
    assert check_change(expect, before, _state({"1": mum})).score == 1.0
    both = check_change(expect, before, _state({}))
    assert both.score == 0.0 and both.violations == ["contact Mum deleted"]
    edited = check_change(expect, before, _state({"1": {**mum, "phone": "+9"}}))
    assert edited.violations == ["contact Mum edited"]
    assert check_change(expect, before, before).progress == 0.0
    alarm = Expect(alarms_added=("07:30",))
    assert check_change(alarm, _state({}), _state({}, ("07:30",))).score == 1.0
    assert check_change(alarm, _state({}), _state({}, ("07:30", "08:00"))).score == 0.0


def test_file_changes_are_checked_by_name_and_album() -> None:
    def files(*rows: tuple[str, str]) -> dict[str, object]:
        state = _state({})
        state["tables"]["files"] = {"files": {f"{a}/{n}": {"id": f"{a}/{n}", "name": n,
                                                            "album": a} for n, a in rows}}
        return state

    before = files(("a.jpg", "Camera"), ("b.pdf", "Work"))
    expect = Expect(files_moved=(("a.jpg", "Holidays"),))
    assert check_change(expect, before, files(("a.jpg", "Holidays"), ("b.pdf", "Work"))).score == 1
    also = check_change(expect, before, files(("a.jpg", "Holidays"), ("b.pdf", "Camera")))
    assert also.score == 0 and also.violations == ["file b.pdf moved to Camera"]
    gone = check_change(Expect(files_removed=("a.jpg",)), before, files(("b.pdf", "Work")))
    assert gone.score == 1
    assert check_change(Expect(files_removed=("a.jpg",)), before, files()).violations == [
        "file b.pdf deleted"]


def test_no_server_or_no_phone_is_one_sentence(monkeypatch: pytest.MonkeyPatch,
                                               adb_server: RealAdbServer) -> None:
    from tests.devices.fake_adbd.adb_server import free_port

    monkeypatch.setenv("FLYWHEEL_ADB_PORT", str(free_port()))  # nothing listens there
    result = runner.invoke(app, ["suite", "eval", "--device", "adb", "--policy", "oracle"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "did not answer" in " ".join(result.output.split())
    monkeypatch.setenv("FLYWHEEL_ADB_PORT", str(adb_server.port))
    monkeypatch.setenv("FLYWHEEL_ADB_SERIAL", "127.0.0.1:1")
    result = runner.invoke(app, ["suite", "eval", "--device", "adb", "--policy", "oracle"])
    assert result.exit_code == 1 and "is not attached" in " ".join(result.output.split())


def test_timers_started_unasked_are_extra_writes() -> None:
    def timers(*left: int) -> dict[str, object]:
        state = _state({})
        state["tables"]["clock"]["timers"] = {f"tm{i}": {"id": f"tm{i}", "seconds_left": s}
                                              for i, s in enumerate(left)}
        return state

    asked = Expect(timer_seconds=300)
    assert check_change(asked, timers(), timers(290)).score == 1.0
    assert check_change(asked, timers(), timers(60)).score == 0.0  # the wrong length
    assert check_change(asked, timers(), timers(300, 300)).score == 0.0  # two started
    unasked = check_change(Expect(settings={"wifi": True}), timers(), timers(300))
    assert unasked.violations == ["1 timer(s) started"]


class _FlakyPhone:
    """The phone, except that every `every`-th reset loses it (an environment fault)."""

    def __init__(self, phone: AdbPhone, every: int) -> None:
        self.phone, self.every, self.resets = phone, every, 0

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self.phone, name)

    def reset(self, task):  # type: ignore[no-untyped-def]
        from devices.protocol import DeviceLost

        self.resets += 1
        if self.resets % self.every == 0:
            raise DeviceLost(f"{self.phone.device_id} dropped off the adb server (injected)")
        return self.phone.reset(task)


def test_a_fault_counts_in_overall_and_the_clean_score_is_labelled_apart(phone: AdbPhone) -> None:
    tasks = device_tasks(1, 0)
    report = evaluate_on_device(_FlakyPhone(phone, every=4), "oracle", tasks=tasks)
    faulted = [e for e in report.episodes if e.fault is not None]
    assert len(faulted) == len(tasks) // 4 and report.faults == len(faulted)
    assert report.fault_share == len(faulted) / len(tasks)
    assert report.overall < 1.0  # a fault scores 0: it is never left out of the headline
    assert report.overall_excluding_faults == 1.0  # the oracle on the episodes that ran
    for episode in faulted:
        assert report.template_scores[episode.template] == 0.0


@pytest.mark.parametrize(("every", "code"), [(2, 1), (100, 0)])
def test_suite_eval_exits_non_zero_when_more_than_a_fifth_of_episodes_fault(
        adb_env: None, monkeypatch: pytest.MonkeyPatch, every: int, code: int) -> None:
    import devices.adb.phone as phones

    real = phones.AdbPhone
    monkeypatch.setattr(phones, "AdbPhone", lambda *a, **k: _FlakyPhone(real(*a, **k), every))
    result = runner.invoke(app, ["suite", "eval", "--device", "adb", "--policy", "oracle"])
    words = " ".join(result.output.split())
    assert result.exit_code == code, words[-2000:]
    assert "a fault scores 0" in words and "excluding faults" in words
    if code:
        assert "were environment faults, more than 20%" in words and "Traceback" not in words


@pytest.mark.parametrize(("shown", "time"), [("6:15\u202fAM", "06:15"), ("6:15 PM", "18:15"), ("12:05\u00a0am", "00:05"),
                                             ("18:15", "18:15"), ("Alarm", None), ("6:15\u202fAM Mon", None)])
def test_clock_times_are_read_as_the_stock_clock_shows_them(shown: str, time: str | None) -> None:
    from devices.adb.suite import clock_time

    assert clock_time(shown) == time


def test_screen_text_treats_every_space_and_hyphen_alike() -> None:
    from devices.adb.suite import screen_text

    assert screen_text("Wi\u2011Fi") == screen_text("wi-fi") and screen_text("6:15\u202fAM") == "6:15 am"
    assert screen_text("Wi Fi") != screen_text("Wi-Fi")
