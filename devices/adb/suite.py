"""The real-device subset of the suite: tasks a stock phone can carry, scored from the phone.

Each template seeds its instance (`sha256(suite_seed, template, index)`, as the suite does),
sets up the phone through the task's initial state (rows and settings the stock profile can
load), and names the change it expects. The checker reads the phone before and after the
episode through adb (contacts provider, `settings get`, `dumpsys alarm`) and compares the whole
change with the expected one: a missing change fails, and so does any extra write (a deleted
distractor, a setting nobody asked for). Answers are checked against what the phone holds,
never against the agent's claim of success.

Tool tasks mirror the suite's settings/contacts/clock templates; GUI tasks drive stock apps
(Settings → Display → Dark theme, Settings → Network & internet → Airplane mode, the Clock
app's alarm switches). The oracle acts only on what it observes (ids and elements come from
observations).

Episodes run the phone inside devices.harness.Harness, as the suite does on a SimPhone: the
policy sees the goal, the harness's catalogue (the task's apps only) and observations; answers
and finishing are harness actions, and the state checked is `Harness.final_state()` (the phone's
tables and settings read through adb, the answer and log from the harness).
"""

from __future__ import annotations

import hashlib
import logging
import random
import re
import unicodedata
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from pydantic import JsonValue

from devices.harness.episode import play
from devices.harness.harness import Harness
from devices.harness.policy import ClaimPolicy, PrivilegedPolicy
from devices.harness.sealed import SealedPolicy
from devices.harness.spec import HarnessSpec
from devices.protocol import DeviceError, DeviceLost, TaskInstance, too_many_faults
from schemas.actions import Action, Answer, Click, Finish, OpenApp, ToolCall
from schemas.envelope import Frozen
from schemas.observations import Observation

__all__ = [
    "DEVICE_TEMPLATES",
    "DeviceCheck",
    "DeviceEpisode",
    "DeviceOracle",
    "DeviceReport",
    "DeviceTemplate",
    "Expect",
    "NoopDevicePolicy",
    "check_change",
    "device_policy",
    "device_tasks",
    "evaluate_on_device",
]

logger = logging.getLogger(__name__)

#: A timer read back from `dumpsys alarm` has run for the rest of the episode: this much may
#: have elapsed between the intent and the final read.
TIMER_SLACK_S = 120

#: Contact fields a checker compares (ids are the phone's own and never expected).
CONTACT_FIELDS = ("name", "phone", "email", "company", "starred")

FIRST = ("Ava", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hugo", "Iris", "Jonas")
LAST = ("Novak", "Okafor", "Petrov", "Quinn", "Rossi", "Sato", "Tanaka", "Usman", "Vega", "Wolf")
SWITCHES = {"wifi": "Wi-Fi", "bluetooth": "Bluetooth", "airplane_mode": "airplane mode",
            "do_not_disturb": "Do Not Disturb", "location": "location",
            "battery_saver": "Battery Saver", "dark_mode": "dark theme"}

Script = Generator[Action, Observation, None]


@dataclass(frozen=True)
class Expect:
    """The whole change a task asks for; everything else must stay as it was."""

    settings: dict[str, Any] = field(default_factory=dict)
    contacts_added: tuple[dict[str, Any], ...] = ()
    contacts_removed: tuple[str, ...] = ()  # by name
    alarms_added: tuple[str, ...] = ()  # HH:MM
    alarms_removed: tuple[str, ...] = ()
    files_moved: tuple[tuple[str, str], ...] = ()  # (file name, album it must end in)
    files_removed: tuple[str, ...] = ()  # by name
    timer_seconds: int | None = None  # one new timer of about this length
    answer_contains: str | None = None


class DeviceCheck(Frozen):
    """A checker's verdict: score 1 only when every sub-goal is met and nothing else changed."""

    score: float
    progress: float
    subgoals: list[tuple[str, bool]]
    violations: list[str]


def _contacts(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return state["tables"]["contacts"]["contacts"]


def _files_by_name(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    rows = state["tables"].get("files", {}).get("files", {}).values()
    return {row["name"]: row for row in rows}


def _alarm_times(state: dict[str, Any]) -> list[str]:
    return sorted(a["time"] for a in state["tables"]["clock"]["alarms"].values())


def check_change(expect: Expect, before: dict[str, Any], after: dict[str, Any]) -> DeviceCheck:
    """Compares the phone's change before → after with `expect` (whole-state diff)."""
    subgoals: list[tuple[str, bool]] = []
    violations: list[str] = []
    changed = {k: v for k, v in after["settings"].items() if before["settings"].get(k) != v}
    for key, value in expect.settings.items():
        subgoals.append((f"setting {key} = {value}", after["settings"].get(key) == value))
    violations += [f"setting {k} changed to {v}" for k, v in changed.items()
                   if k not in expect.settings]
    old, new = _contacts(before), _contacts(after)
    removed = [old[i] for i in old if i not in new]
    added = [new[i] for i in new if i not in old]
    edited = [new[i] for i in new if i in old and any(
        new[i].get(f) != old[i].get(f) for f in CONTACT_FIELDS)]
    for name in expect.contacts_removed:
        subgoals.append((f"contact {name} deleted", any(c["name"] == name for c in removed)))
    violations += [f"contact {c['name']} deleted" for c in removed
                   if c["name"] not in expect.contacts_removed]
    matched: list[int] = []
    for want in expect.contacts_added:
        hit = next((n for n, c in enumerate(added) if n not in matched and all(
            c.get(k) == v for k, v in want.items())), None)
        subgoals.append((f"contact {want.get('name')} added", hit is not None))
        if hit is not None:
            matched.append(hit)
    violations += [f"contact {c['name']} added" for n, c in enumerate(added) if n not in matched]
    violations += [f"contact {c['name']} edited" for c in edited]
    old_alarms, new_alarms = _alarm_times(before), _alarm_times(after)
    for time in expect.alarms_added:
        subgoals.append((f"alarm {time} set", new_alarms.count(time) > old_alarms.count(time)))
    for time in expect.alarms_removed:
        subgoals.append((f"alarm {time} off", time in old_alarms and time not in new_alarms))
    violations += [f"alarm {t} set" for t in sorted(set(new_alarms) - set(old_alarms))
                   if t not in expect.alarms_added]
    violations += [f"alarm {t} removed" for t in sorted(set(old_alarms) - set(new_alarms))
                   if t not in expect.alarms_removed]
    old_files, new_files = _files_by_name(before), _files_by_name(after)
    for name, album in expect.files_moved:
        subgoals.append((f"file {name} in {album}",
                         new_files.get(name, {}).get("album") == album))
    for name in expect.files_removed:
        subgoals.append((f"file {name} deleted", name in old_files and name not in new_files))
    moved = dict(expect.files_moved)
    for name, row in old_files.items():
        now = new_files.get(name)
        if now is None and name not in expect.files_removed:
            violations.append(f"file {name} deleted")
        elif now is not None and now["album"] != row["album"] and name not in moved:
            violations.append(f"file {name} moved to {now['album']}")
    violations += [f"file {n} created" for n in new_files if n not in old_files]
    old_timers = list(before["tables"]["clock"].get("timers", {}).values())
    new_timers = list(after["tables"]["clock"].get("timers", {}).values())
    started = len(new_timers) - len(old_timers)
    if expect.timer_seconds is not None:
        low = expect.timer_seconds - TIMER_SLACK_S
        subgoals.append((f"timer of {expect.timer_seconds} s started", started == 1 and any(
            low <= (t.get("seconds_left") or -1) <= expect.timer_seconds for t in new_timers)))
    elif started > 0:
        violations.append(f"{started} timer(s) started")
    if expect.answer_contains is not None:
        answer = after.get("answer") or ""
        subgoals.append(("answer names the phone's value",
                         expect.answer_contains.lower() in str(answer).lower()))
    met = sum(ok for _, ok in subgoals)
    progress = met / len(subgoals) if subgoals else 1.0
    score = 1.0 if subgoals and met == len(subgoals) and not violations else 0.0
    return DeviceCheck(score=score, progress=progress, subgoals=subgoals, violations=violations)


# -- templates -------------------------------------------------------------------------------

@dataclass(frozen=True)
class DeviceTemplate:
    """One real-device task family member: params, goal, set-up, expected change, oracle."""

    name: str
    kind: str  # "tool" or "gui"
    apps: tuple[str, ...]
    params: Callable[[random.Random], dict[str, Any]]
    goal: Callable[[dict[str, Any]], str]
    initial: Callable[[dict[str, Any]], dict[str, Any]]
    expect: Callable[[dict[str, Any]], Expect]
    oracle: Callable[[dict[str, Any]], Script]
    max_steps: int = 10

    def generate(self, index: int, suite_seed: int = 0) -> TaskInstance:
        digest = hashlib.sha256(f"{suite_seed}:{self.name}:{index}".encode()).digest()
        seed = int.from_bytes(digest[:8], "big")
        params = self.params(random.Random(seed))
        return TaskInstance(task_id=f"{self.name}-dev-{index:05d}-{seed & 0xFFFFFFFF:08x}",
                            template=self.name, family="tool", split="dev", index=index,
                            seed=seed, params=params, goal=self.goal(params),
                            initial_state=self.initial(params), max_steps=self.max_steps,
                            apps=list(self.apps))


def _person(rng: random.Random) -> dict[str, str]:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    return {"name": f"{first} {last}", "phone": f"+1-555-{rng.randint(100, 999)}-"
                                                 f"{rng.randint(1000, 9999)}"}


def _two_people(rng: random.Random) -> tuple[dict[str, str], dict[str, str]]:
    target = _person(rng)
    other = _person(rng)
    while other["name"] == target["name"]:
        other = _person(rng)
    return target, other


def _pair_params(rng: random.Random) -> dict[str, str]:
    target, other = _two_people(rng)
    return {"name": target["name"], "phone": target["phone"], "other": other["name"],
            "other_phone": other["phone"]}


def _pair_state(p: dict[str, Any]) -> dict[str, Any]:
    """The phone's contacts for `_pair_params`: the target and the other person, both saved."""
    return {"contacts": {"contacts": [{"name": p["name"], "phone": p["phone"]},
                                      {"name": p["other"], "phone": p["other_phone"]}]}}


_SPACES = dict.fromkeys(map(ord, "\u00a0\u2007\u2009\u202f"), " ")
_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2212"), "-")
_CLOCK_TIME = re.compile(r"(\d{1,2}):(\d\d)(?:\s*([ap])\.?m\.?)?")


def screen_text(text: str | None) -> str:
    """`text` as a phone shows it, compared loosely: Unicode-normalised (NFKC), every kind of
    space a space (Clock's `6:15\u202fAM`), every hyphen a hyphen (Settings' `Wi\u2011Fi`), case
    folded."""
    normal = unicodedata.normalize("NFKC", text or "").translate(_SPACES).translate(_DASHES)
    return " ".join(normal.split()).casefold()


def clock_time(text: str | None) -> str | None:
    """`HH:MM` (24-hour) of a time as a clock app shows it (`6:15 AM`, `18:15`), else None."""
    match = _CLOCK_TIME.fullmatch(screen_text(text))
    if match is None:
        return None
    hour, minute, half = int(match.group(1)), match.group(2), match.group(3)
    if half is not None:
        hour = hour % 12 + (12 if half == "p" else 0)
    return f"{hour:02d}:{minute}"


def _find(obs: Observation, *, text: str | None = None) -> int:
    for index, element in enumerate(obs.screen):
        if text is not None and screen_text(element.text) == screen_text(text):
            return index
    raise LookupError(f"nothing on screen reads {text!r}")


def _row_switch(obs: Observation, label: int) -> int | None:
    """The checkable element in the label's row (stock switches carry no label of their own)."""
    box = obs.screen[label].bounds
    if box is None:
        return None
    middle = (box.top + box.bottom) / 2
    row = [i for i, e in enumerate(obs.screen) if i != label and e.is_checkable and e.bounds is not None
           and e.bounds.top <= middle < e.bounds.bottom]
    return min(row, key=lambda i: abs(obs.screen[i].bounds.left - box.right)) if row else None  # type: ignore[union-attr]


def _find_switch(obs: Observation, label: str, *, matches: Any = None) -> int:
    """The switch for `label`: one whose content-desc starts with it (emulator images), else the
    checkable element in the row of the text reading it (stock). `matches(text)` replaces the
    plain comparison (e.g. a clock time)."""
    same = matches or (lambda text: screen_text(text) == screen_text(label))
    for index, element in enumerate(obs.screen):
        if element.is_checkable and element.content_description and (
                same(element.content_description.split(" alarm")[0])
                or screen_text(element.content_description).startswith(screen_text(label))):
            return index
    for index, element in enumerate(obs.screen):
        if not element.is_checkable and same(element.text):
            switch = _row_switch(obs, index)
            if switch is not None:
                return switch
    raise LookupError(f"no switch on screen for {label!r}")


def _setting_params(rng: random.Random) -> dict[str, Any]:
    return {"key": rng.choice(sorted(SWITCHES)), "value": rng.random() < 0.5}


def _setting_oracle(p: dict[str, Any]) -> Script:
    yield ToolCall(name="settings.set", arguments={"key": p["key"], "value": p["value"]})
    yield Finish()


def _contacts_named(obs: Any, name: str) -> list[dict[str, Any]]:
    """The rows of a contacts.search result whose name is exactly `name`."""
    rows = obs.result.value if obs.result is not None and obs.result.ok else []
    return [r for r in rows if isinstance(r, dict) and r.get("name") == name]


def _brightness_oracle(p: dict[str, Any]) -> Script:
    yield ToolCall(name="settings.set", arguments={"key": "brightness", "value": p["level"]})
    yield Finish()


def _add_oracle(p: dict[str, Any]) -> Script:
    yield ToolCall(name="contacts.add", arguments={"name": p["name"], "phone": p["phone"]})
    yield Finish()


def _delete_oracle(p: dict[str, Any]) -> Script:
    obs = yield ToolCall(name="contacts.search", arguments={"query": p["name"]})
    ids = [r["id"] for r in _contacts_named(obs, p["name"])]
    if ids:
        yield ToolCall(name="contacts.delete", arguments={"id": ids[0]})
    yield Finish()


def _lookup_oracle(p: dict[str, Any]) -> Script:
    obs = yield ToolCall(name="contacts.search", arguments={"query": p["name"]})
    phones = [r["phone"] for r in _contacts_named(obs, p["name"])]
    if phones:
        yield Answer(text=f"{p['name']}'s number is {phones[0]}.")
    yield Finish()


def _alarm_oracle(p: dict[str, Any]) -> Script:
    yield ToolCall(name="clock.set_alarm", arguments={"time": p["time"]})
    yield Finish()


def _settings_switch_oracle(page: str, switch_label: str) -> Callable[[dict[str, Any]], Script]:
    """The GUI oracle that opens Settings › `page` and sets its `switch_label` switch to the
    task's `value` (a click only when it is not already so)."""
    def oracle(p: dict[str, Any]) -> Script:
        obs = yield OpenApp(app_name="Settings")
        obs = yield Click(index=_find(obs, text=page))
        switch = _find_switch(obs, switch_label)
        if obs.screen[switch].is_checked != p["value"]:
            yield Click(index=switch)
        yield Finish()
    return oracle


_dark_gui_oracle = _settings_switch_oracle("Display", "Dark theme")
_airplane_gui_oracle = _settings_switch_oracle("Network & internet", "Airplane mode")


def _alarm_off_gui_oracle(p: dict[str, Any]) -> Script:
    obs = yield OpenApp(app_name="Clock")
    yield Click(index=_find_switch(obs, p["time"], matches=lambda text: clock_time(text) == p["time"]))
    yield Finish()


_FILE_NAMES = ("beach.jpg", "receipt.pdf", "voice-memo.m4a", "passport-scan.png", "lease.pdf",
               "birthday.jpg", "podcast.mp3", "notes-2025.txt")
_ALBUMS = ("Camera", "Documents", "Holidays", "Recordings", "Work")


def _files_params(rng: random.Random) -> dict[str, Any]:
    target, other = rng.sample(_FILE_NAMES, 2)
    source, album, other_album = rng.sample(_ALBUMS, 3)
    return {"name": target, "from": source, "album": album, "other": other,
            "other_album": other_album}


def _files_initial(p: dict[str, Any]) -> dict[str, Any]:
    return {"files": {"files": [{"name": p["name"], "album": p["from"], "size_kb": 48},
                                {"name": p["other"], "album": p["other_album"], "size_kb": 16}]}}


def _file_id(obs: Observation, name: str) -> str | None:
    rows = obs.result.value if obs.result is not None and obs.result.ok else []
    return next((r["id"] for r in rows if isinstance(r, dict) and r.get("name") == name), None)


def _move_oracle(p: dict[str, Any]) -> Script:
    obs = yield ToolCall(name="files.search", arguments={"query": p["name"]})
    file_id = _file_id(obs, p["name"])
    if file_id is not None:
        yield ToolCall(name="files.move", arguments={"id": file_id, "album": p["album"]})
    yield Finish()


def _file_delete_oracle(p: dict[str, Any]) -> Script:
    obs = yield ToolCall(name="files.search", arguments={"query": p["name"]})
    file_id = _file_id(obs, p["name"])
    if file_id is not None:
        yield ToolCall(name="files.delete", arguments={"id": file_id})
    yield Finish()


def _timer_oracle(p: dict[str, Any]) -> Script:
    yield ToolCall(name="clock.start_timer", arguments={"seconds": p["minutes"] * 60})
    yield Finish()


def _time(rng: random.Random) -> str:
    return f"{rng.randint(5, 10):02d}:{rng.choice((0, 15, 30, 45)):02d}"


DEVICE_TEMPLATES: tuple[DeviceTemplate, ...] = (
    DeviceTemplate(
        "stock_settings_switch", "tool", ("settings",), _setting_params,
        lambda p: f"Turn {'on' if p['value'] else 'off'} {SWITCHES[p['key']]}.",
        lambda p: {"settings": {p["key"]: not p["value"]}},
        lambda p: Expect(settings={p["key"]: p["value"]}), _setting_oracle),
    DeviceTemplate(
        "stock_brightness", "tool", ("settings",),
        lambda rng: {"level": rng.choice((10, 20, 40, 70, 90))},
        lambda p: f"Set the screen brightness to {p['level']}%.",
        lambda p: {"settings": {"brightness": 55}},
        lambda p: Expect(settings={"brightness": p["level"]}), _brightness_oracle),
    DeviceTemplate(
        "stock_contact_add", "tool", ("contacts",), _person,
        lambda p: f"Save {p['name']} as a new contact with the number {p['phone']}.",
        lambda p: {},
        lambda p: Expect(contacts_added=({"name": p["name"], "phone": p["phone"]},)),
        _add_oracle),
    DeviceTemplate(
        "stock_contact_delete", "tool", ("contacts",),
        _pair_params,
        lambda p: f"Delete {p['name']} from my contacts.",
        _pair_state,
        lambda p: Expect(contacts_removed=(p["name"],)), _delete_oracle),
    DeviceTemplate(
        "stock_contact_lookup", "tool", ("contacts",),
        _pair_params,
        lambda p: f"What is {p['name']}'s phone number?",
        _pair_state,
        lambda p: Expect(answer_contains=p["phone"]), _lookup_oracle),
    DeviceTemplate(
        "stock_alarm_set", "tool", ("clock",), lambda rng: {"time": _time(rng)},
        lambda p: f"Set an alarm for {p['time']}.", lambda p: {},
        lambda p: Expect(alarms_added=(p["time"],)), _alarm_oracle),
    DeviceTemplate(
        "stock_timer_start", "tool", ("clock",), lambda rng: {"minutes": rng.choice((3, 5, 10,
                                                                                     25))},
        lambda p: f"Start a {p['minutes']}-minute timer.", lambda p: {},
        lambda p: Expect(timer_seconds=p["minutes"] * 60), _timer_oracle),
    DeviceTemplate(
        "stock_files_move", "tool", ("files",), _files_params,
        lambda p: f"Move {p['name']} into the {p['album']} album.", _files_initial,
        lambda p: Expect(files_moved=((p["name"], p["album"]),)), _move_oracle),
    DeviceTemplate(
        "stock_files_delete", "tool", ("files",), _files_params,
        lambda p: f"Delete the file {p['name']}.", _files_initial,
        lambda p: Expect(files_removed=(p["name"],)), _file_delete_oracle),
    DeviceTemplate(
        "stock_gui_dark_theme", "gui", ("settings",), lambda rng: {"value": rng.random() < 0.5},
        lambda p: f"In the Settings app, turn {'on' if p['value'] else 'off'} Dark theme.",
        lambda p: {"settings": {"dark_mode": not p["value"]}},
        lambda p: Expect(settings={"dark_mode": p["value"]}), _dark_gui_oracle),
    DeviceTemplate(
        "stock_gui_airplane_mode", "gui", ("settings",),
        lambda rng: {"value": rng.random() < 0.5},
        lambda p: f"In the Settings app, turn {'on' if p['value'] else 'off'} Airplane mode.",
        lambda p: {"settings": {"airplane_mode": not p["value"]}},
        lambda p: Expect(settings={"airplane_mode": p["value"]}), _airplane_gui_oracle),
    DeviceTemplate(
        "stock_gui_alarm_off", "gui", ("clock",), lambda rng: {"time": _time(rng)},
        lambda p: f"In the Clock app, switch off the {p['time']} alarm.",
        lambda p: {"clock": {"alarms": [{"time": p["time"], "enabled": True}]}},
        lambda p: Expect(alarms_removed=(p["time"],)), _alarm_off_gui_oracle),
)

_BY_NAME = {t.name: t for t in DEVICE_TEMPLATES}


def device_tasks(n_per_template: int = 1, suite_seed: int = 0) -> list[TaskInstance]:
    return [t.generate(i, suite_seed) for t in DEVICE_TEMPLATES for i in range(n_per_template)]


# -- policies --------------------------------------------------------------------------------

class DeviceOracle(PrivilegedPolicy):
    """Solves a real-device task from its intent, reading ids and elements from observations."""

    name = "oracle"

    def __init__(self) -> None:
        self._script: Script | None = None
        self._started = False

    def prepare(self, task: TaskInstance) -> None:
        self._script = _BY_NAME[task.template].oracle(dict(task.params))
        self._started = False

    def begin(self, goal: str, catalogue: object = None) -> None:
        """The goal is already known from `prepare`; an oracle needs no catalogue."""

    def next_action(self, observation: Observation) -> Action:
        assert self._script is not None, "call prepare(task) first"
        try:
            if not self._started:
                self._started = True
                return next(self._script)
            return self._script.send(observation)
        except (StopIteration, LookupError):
            return Finish()


class NoopDevicePolicy:
    """Finishes at once: the baseline every checker must score 0."""

    name = "noop"

    def begin(self, goal: str, catalogue: object = None) -> None:
        """Nothing to set up."""

    def next_action(self, observation: Observation) -> Action:
        return Finish()


# -- evaluation ------------------------------------------------------------------------------

class DeviceEpisode(Frozen):
    """One episode on a phone: its score and, for an environment fault, why it has none."""

    task_id: str
    template: str
    score: float | None
    steps: int
    violations: list[str]
    fault: str | None = None


class DeviceReport(Frozen):
    """Scores of a policy on the real-device subset. Every episode counts in `overall` (a fault
    scores 0); the faults are counted beside it, and `overall_excluding_faults` is the same mean
    over the episodes that did not fault, labelled as such wherever it is shown."""

    policy: str
    device_id: str
    harness_version: str
    episodes: list[DeviceEpisode]
    template_scores: dict[str, float]
    overall: float
    faults: int
    fault_share: float = 0.0
    overall_excluding_faults: float | None = None

    @property
    def too_many_faults(self) -> bool:
        return too_many_faults(self.fault_share)

    def to_json_dict(self) -> dict[str, JsonValue]:
        return self.model_dump(mode="json")


def run_device_episode(phone: Any, task: TaskInstance, policy: Any,
                       spec: HarnessSpec | None = None) -> DeviceEpisode:
    """Reset the harnessed phone, read it, let `policy` act, read it again, check the change.
    `phone` may already be a Harness (then `spec` is ignored)."""
    template = _BY_NAME[task.template]
    harness = phone if isinstance(phone, Harness) else Harness(phone, spec)
    before: dict[str, Any] | None = None

    def call_device(fn: Callable[..., Any], *args: Any) -> Any:
        nonlocal before
        answered = fn(*args)
        if before is None:  # the reset's answer: read the phone before anyone acts
            before = harness.final_state()
        return answered

    try:
        played = play(harness, task, policy, call_device=call_device).checked()
        steps = len(played.actions)
        after = harness.final_state()
    except DeviceError as error:  # lost, or a reset/read the phone refused: not the policy's fault
        kind = "lost" if isinstance(error, DeviceLost) else "device error"
        logger.warning("episode %s: %s (%s)", task.task_id, error, kind)
        return DeviceEpisode(task_id=task.task_id, template=task.template, score=None, steps=0,
                             violations=[], fault=f"{kind}: {error}")
    assert before is not None  # play's first device call is the reset, which read it
    check = check_change(template.expect(dict(task.params)), before, after)
    return DeviceEpisode(task_id=task.task_id, template=task.template, score=check.score,
                         steps=steps, violations=check.violations)


def device_policy(name: str) -> Any:
    """The policy `name` on a real phone: oracle and noop (the subset's own), claim, or
    MODULE:CLASS of any class implementing devices.harness.policy.Policy (sealed off in a
    process of its own). The random agent is refused: it would write at random on somebody's
    phone. Raises ValueError (a devices.harness.policy.PolicyLoadError for a bad MODULE:CLASS)
    naming the choices."""
    if name == "oracle":
        return DeviceOracle()
    if name == "noop":
        return NoopDevicePolicy()
    if name == "claim":
        return ClaimPolicy()
    if ":" in name:
        return SealedPolicy(name)
    raise ValueError(f"policy {name!r} is not available on a device; use oracle, noop, claim or "
                     f"MODULE:CLASS")


def evaluate_on_device(phone: Any, policy: str | Any, n_per_template: int = 1,
                       suite_seed: int = 0, *, tasks: Iterable[TaskInstance] | None = None,
                       progress: Callable[[DeviceEpisode], None] | None = None,
                       spec: HarnessSpec | None = None) -> DeviceReport:
    """Runs `policy` (a name `device_policy` knows, or a policy object) on every real-device
    task, with the phone inside one harness built from `spec` (default: HarnessSpec.default())."""
    if isinstance(policy, str):
        policy = device_policy(policy)
    harness = phone if isinstance(phone, Harness) else Harness(phone, spec)
    episodes = []
    for task in tasks if tasks is not None else device_tasks(n_per_template, suite_seed):
        episode = run_device_episode(harness, task, policy)
        episodes.append(episode)
        if progress is not None:
            progress(episode)
    faults = sum(e.fault is not None for e in episodes)
    template_scores = _template_means(episodes, faults_count=True)
    clean = _template_means(episodes, faults_count=False)
    return DeviceReport(policy=getattr(policy, "name", type(policy).__name__),
                        device_id=str(getattr(phone, "device_id", "?")),
                        harness_version=harness.version, episodes=episodes,
                        template_scores=template_scores,
                        overall=fmean(template_scores.values()) if template_scores else 0.0,
                        faults=faults, fault_share=faults / len(episodes) if episodes else 0.0,
                        overall_excluding_faults=fmean(clean.values()) if clean else None)


def _template_means(episodes: list[DeviceEpisode], *, faults_count: bool) -> dict[str, float]:
    """Mean score per template; a faulted episode scores 0 when `faults_count`, else is left out."""
    per: dict[str, list[float]] = {}
    for episode in episodes:
        if episode.score is not None:
            per.setdefault(episode.template, []).append(episode.score)
        elif faults_count:
            per.setdefault(episode.template, []).append(0.0)
    return {name: fmean(v) for name, v in per.items()}
