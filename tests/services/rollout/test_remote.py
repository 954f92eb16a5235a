"""Episodes through the device runners on the real broker: the same final states and verdicts
as in-process, and a runner that stops mid-episode ends that episode with a failure in time."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from devices.blobs import BlobStore
from devices.harness.harness import Harness
from devices.protocol import DeviceLost
from devices.sim import SimPhone
from devices.suite.registry import templates_for
from schemas.actions import Wait
from schemas.episodes import ActionRequested, EpisodeEnded, ObservationRecorded
from schemas.observations import Observation, UIElement
from schemas.settings import SettingsError
from schemas.tasks import TaskProposed
from schemas.topics import Topic
from services.dataflow.ids import derived_id
from services.dataflow.tasks import ScriptedOracle, instance_of, task_event
from services.device_runner.decide import RunnerMemory
from services.device_runner.loop import run_device_runner
from services.device_runner.settings import DeviceRunnerSettings, load_device_runner_settings
from services.rollout.engine import Rollout
from services.rollout.policies import load_policy
from services.rollout.remote import RemoteDevice, ReplyRouter
from services.rollout.service import run_rollout
from services.rollout.settings import RolloutSettings, load_rollout_settings
from services.verifier.decide import World, judge
from streams.consumer import TypedBatchConsumer
from streams.producer import TypedProducer

pytestmark = pytest.mark.integration

#: Only a guard against a hung test.
DEADLINE_S = 120.0


def _tasks(count: int) -> list[TaskProposed]:
    """`count` train tasks spread over the templates (tools, GUI, memory, skills, delegation)."""
    templates = templates_for("train")
    step = max(1, len(templates) // count)
    out = []
    for i in range(count):
        task = templates[(i * step) % len(templates)].generate("train", i, 0)
        out.append(task_event(task, tier="easy", event_id=derived_id("test-task", task.task_id),
                              source="test/0", correlation_id=task.task_id))
    return out


@contextmanager
def _runners(bootstrap: str, device_ids: list[str], actions: Topic, observations: Topic,
             phones: dict[str, Any] | None = None, start_from: str = "earliest"
             ) -> Iterator[dict[str, threading.Event]]:
    """One device runner thread per id (a Harness around a SimPhone, as open_device builds);
    yields each runner's stop event."""
    group = f"runner-{uuid.uuid4().hex[:8]}"
    stops: dict[str, threading.Event] = {}
    threads: list[threading.Thread] = []
    for device_id in device_ids:
        settings = DeviceRunnerSettings(device_id=device_id, group_id=group,
                                        start_from=start_from, poll_timeout_ms=100)
        phone = (phones or {}).get(device_id) or Harness(SimPhone(device_id))
        stop, ready = threading.Event(), threading.Event()
        thread = threading.Thread(target=run_device_runner, daemon=True, args=(settings, phone,
                                  stop), kwargs={"bootstrap": bootstrap, "actions": actions,
                                                 "observations": observations,
                                                 "memory": RunnerMemory(),
                                                 "on_ready": ready.set})
        thread.start()
        assert ready.wait(60), f"the runner of {device_id} did not start"
        stops[device_id], threads = stop, [*threads, thread]
    try:
        yield stops
    finally:
        for stop in stops.values():
            stop.set()
        for thread in threads:
            thread.join(30)


def _verdicts(tasks: list[TaskProposed], ended: list[EpisodeEnded], blobs: Path
              ) -> dict[str, tuple[bool, float]]:
    world = World(BlobStore(blobs), Harness(SimPhone("verifier")))
    by_task = {t.task_id: t for t in tasks}
    out = {}
    for episode in ended:
        verdict = judge(by_task[episode.task_id], episode, world)[0]
        out[episode.task_id] = (verdict.passed, verdict.score)
    return out


def _steps(episode: EpisodeEnded) -> list[dict[str, Any]]:
    """Each step's action, observation, tokens and tool calls (not its latency)."""
    return [s.model_dump(mode="json", exclude={"latency_ms"}) for s in episode.steps]


def _in_process(tasks: list[TaskProposed], blobs: Path) -> list[EpisodeEnded]:
    rollout = Rollout(SimPhone("local"), load_policy("oracle"), "oracle", BlobStore(blobs))
    try:
        return [rollout.run(task)[1] for task in tasks]
    finally:
        rollout.close()


def test_the_service_through_runners_gives_the_in_process_verdicts(bootstrap: str, fresh_topic,
                                                                    tmp_path: Path) -> None:
    tasks_topic, episodes = fresh_topic("flywheel.tasks"), fresh_topic("flywheel.episodes")
    actions, observations = fresh_topic("flywheel.actions"), fresh_topic("flywheel.observations")
    tasks = _tasks(12)
    began = time.perf_counter()
    local = _in_process(tasks, tmp_path / "local")
    local_s = time.perf_counter() - began
    settings = RolloutSettings(devices="sim-0,sim-1", group_id=f"r-{uuid.uuid4().hex[:8]}",
                               poll_timeout_ms=100, device_timeout_s=20)
    stop = threading.Event()
    with _runners(bootstrap, ["sim-0", "sim-1"], actions, observations):
        service = threading.Thread(target=run_rollout, args=(settings, bootstrap,
                                   tmp_path / "remote", stop), daemon=True,
                                   kwargs={"tasks": tasks_topic, "episodes": episodes,
                                           "actions": actions, "observations": observations})
        service.start()
        with TypedProducer(bootstrap, client_id="test-generator") as producer:
            for task in tasks:
                producer.send(tasks_topic, task)
        began = time.perf_counter()
        ended: dict[str, EpisodeEnded] = {}
        reader = TypedBatchConsumer(bootstrap, [episodes], f"reader-{uuid.uuid4().hex[:8]}")
        try:
            deadline = time.monotonic() + DEADLINE_S
            while len(ended) < len(tasks) and time.monotonic() < deadline:
                for record in reader.poll_batch(200):
                    if isinstance(record.event, EpisodeEnded):
                        ended[record.event.task_id] = record.event
        finally:
            reader.close()
            remote_s = time.perf_counter() - began
            stop.set()
            service.join(30)
    print(f"\n{len(tasks)} episodes: in-process {len(tasks) / local_s:.1f}/s, through two "
          f"runners {len(tasks) / remote_s:.1f}/s (from the first task sent)")
    assert len(ended) == len(tasks)
    remote = [ended[t.task_id] for t in tasks]
    assert {e.device_id for e in remote} == {"sim-0", "sim-1"}
    assert all(e.outcome == "finished" and e.failure is None for e in remote)
    # The same final states byte for byte (so the same blobs), hence the same verdicts.
    assert [e.final_state for e in remote] == [e.final_state for e in local]
    assert [_steps(e) for e in remote] == [_steps(e) for e in local]
    local_verdicts = _verdicts(tasks, local, tmp_path / "local")
    assert _verdicts(tasks, remote, tmp_path / "remote" / "blobs") == local_verdicts
    assert all(passed for passed, _ in local_verdicts.values())


class _StopsRunnerAfter(ScriptedOracle):
    """The oracle, which stops the runner's loop before its `at`-th action."""

    def __init__(self, stop: threading.Event, at: int) -> None:
        super().__init__()
        self.stop, self.at, self.calls = stop, at, 0

    def next_action(self, observation: Any) -> Any:
        self.calls += 1
        if self.calls == self.at:
            self.stop.set()
            time.sleep(0.5)  # the runner finishes its poll and leaves
        return super().next_action(observation)


def test_a_runner_stopped_mid_episode_ends_it_with_a_failure_within_the_timeout(
        bootstrap: str, fresh_topic, tmp_path: Path) -> None:
    actions, observations = fresh_topic("flywheel.actions"), fresh_topic("flywheel.observations")
    [task] = [t for t in _tasks(40) if len(_in_process([t], tmp_path / "probe")[0].steps) >= 3][:1]
    with _runners(bootstrap, ["sim-0"], actions, observations) as stops, \
            ReplyRouter(bootstrap, actions=actions, observations=observations) as router:
        policy = _StopsRunnerAfter(stops["sim-0"], at=2)
        rollout = Rollout(RemoteDevice("sim-0", router, timeout_s=1.5), policy, "oracle",
                         BlobStore(tmp_path), call_timeout_s=30)
        began = time.monotonic()
        started, ended = rollout.run(task)
        took = time.monotonic() - began
        rollout.close()
    assert ended.outcome == "device_failed" and ended.final_state is None
    assert "did not answer" in (ended.failure or "") and "sim-0" in ended.failure
    assert len(ended.steps) == 1  # the first action was answered, the second never
    assert took < 1.5 + 0.5 + 5.0, f"the episode took {took:.1f} s to end"
    assert started.device_id == ended.device_id == "sim-0"


def test_a_failed_device_ends_the_episode_with_the_runners_reason(bootstrap: str, fresh_topic,
                                                                   tmp_path: Path) -> None:
    from tests.services.device_runner.helpers import LosingPhone

    actions, observations = fresh_topic("flywheel.actions"), fresh_topic("flywheel.observations")
    [task] = [t for t in _tasks(40) if len(_in_process([t], tmp_path / "probe")[0].steps) >= 3][:1]
    phones = {"sim-0": Harness(LosingPhone("sim-0", lose_at=2))}
    with _runners(bootstrap, ["sim-0"], actions, observations, phones), \
            ReplyRouter(bootstrap, actions=actions, observations=observations) as router:
        rollout = Rollout(RemoteDevice("sim-0", router, timeout_s=20), load_policy("oracle"),
                          "oracle", BlobStore(tmp_path))
        began = time.monotonic()
        _, ended = rollout.run(task)
        took = time.monotonic() - began
        rollout.close()
    assert ended.outcome == "device_failed" and "unplugged" in (ended.failure or "")
    assert ended.final_state is None and took < 10


def test_a_runner_reading_from_latest_answers_a_request_sent_right_after_it_is_ready(
        bootstrap: str, fresh_topic) -> None:
    """The runner's partition is positioned before on_ready, not lazily at its first fetch
    (which would skip a request sent in between)."""
    actions, observations = fresh_topic("flywheel.actions"), fresh_topic("flywheel.observations")
    [task] = _tasks(1)
    with ReplyRouter(bootstrap, actions=actions, observations=observations) as router:
        for device_id in ("sim-0", "sim-1", "sim-2"):
            with _runners(bootstrap, [device_id], actions, observations, start_from="latest"):
                device = RemoteDevice(device_id, router, timeout_s=5)
                device.bind(f"ep-{device_id}")
                seen = device.reset(instance_of(task))
                assert seen.step == 0 and device.device_state()["tables"]


def test_remote_requests_are_validated() -> None:
    from schemas.actions import Click, ToolCall

    with pytest.raises(ValueError, match="call_tool request carries a tool_call"):
        ActionRequested(source="t", correlation_id="c", episode_id="e", device_id="sim-0",
                        step=1, action=Click(index=1), request="call_tool")
    ok = ActionRequested(source="t", correlation_id="c", episode_id="e", device_id="sim-0",
                         step=1, action=ToolCall(name="x", arguments={}), request="call_tool")
    assert json.loads(ok.model_dump_json())["request"] == "call_tool"


def test_bad_device_lists_get_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLYWHEEL_ROLLOUT_DEVICES", "sim-0, sim 1")
    with pytest.raises(SettingsError, match="FLYWHEEL_ROLLOUT_DEVICES.*'sim 1'"):
        load_rollout_settings()
    monkeypatch.setenv("FLYWHEEL_ROLLOUT_DEVICES", "sim-0,sim-0")
    with pytest.raises(SettingsError, match="repeat"):
        load_rollout_settings()
    monkeypatch.setenv("FLYWHEEL_ROLLOUT_DEVICES", " sim-0 , sim-1 ")
    assert load_rollout_settings().device_ids == ["sim-0", "sim-1"]
    monkeypatch.setenv("FLYWHEEL_ROLLOUT_DEVICES", "")
    assert load_rollout_settings().device_ids == []


def test_a_runners_phones_are_named_id_star_n(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLYWHEEL_ROLLOUT_DEVICES", "hub*3, sim-0, one*1")
    assert load_rollout_settings().device_ids == ["hub-0", "hub-1", "hub-2", "sim-0", "one"]
    assert DeviceRunnerSettings(device_id="hub", phones=3).device_ids == ["hub-0", "hub-1", "hub-2"]
    for bad, sentence in (("hub*0", "ID\\*N"), ("hub*x", "ID\\*N"), ("hub*2,hub-1", "repeat"),
                          ("hub*2000", "ID\\*N"), ("*3", "ID\\*N")):
        monkeypatch.setenv("FLYWHEEL_ROLLOUT_DEVICES", bad)
        with pytest.raises(SettingsError, match=sentence):
            load_rollout_settings()


def test_an_adb_runner_drives_one_phone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLYWHEEL_DEVICE_RUNNER_KIND", "adb")
    monkeypatch.setenv("FLYWHEEL_DEVICE_RUNNER_PHONES", "2")
    with pytest.raises(SettingsError, match="FLYWHEEL_DEVICE_RUNNER_PHONES.*one phone"):
        load_device_runner_settings()


def test_the_service_through_a_runner_of_many_phones_gives_the_in_process_episodes(
        bootstrap: str, fresh_topic, tmp_path: Path) -> None:
    """One runner serving four sim phones ('hub*4'): the rollout plays four episodes at once
    through it, and every episode is the one played in-process, step for step."""
    tasks_topic, episodes = fresh_topic("flywheel.tasks"), fresh_topic("flywheel.episodes")
    actions, observations = fresh_topic("flywheel.actions"), fresh_topic("flywheel.observations")
    tasks = _tasks(8)
    local = {e.task_id: e for e in _in_process(tasks, tmp_path / "local")}
    settings = RolloutSettings(devices="hub*4", group_id=f"r-{uuid.uuid4().hex[:8]}",
                               poll_timeout_ms=100, device_timeout_s=20)
    runner = DeviceRunnerSettings(device_id="hub", phones=4, group_id=f"g-{uuid.uuid4().hex[:8]}",
                                  poll_timeout_ms=100)
    phones = [Harness(SimPhone(d)) for d in runner.device_ids]
    stop, ready = threading.Event(), threading.Event()
    threads = [threading.Thread(target=run_device_runner, daemon=True, args=(runner, phones, stop),
                                kwargs={"bootstrap": bootstrap, "actions": actions,
                                        "observations": observations, "on_ready": ready.set}),
               threading.Thread(target=run_rollout, daemon=True, args=(settings, bootstrap,
                                tmp_path / "remote", stop),
                                kwargs={"tasks": tasks_topic, "episodes": episodes,
                                        "actions": actions, "observations": observations})]
    threads[0].start()
    assert ready.wait(60)
    threads[1].start()
    ended: dict[str, EpisodeEnded] = {}
    try:
        with TypedProducer(bootstrap, client_id="test-generator") as producer:
            for task in tasks:
                producer.send(tasks_topic, task)
        with TypedBatchConsumer(bootstrap, [episodes], f"reader-{uuid.uuid4().hex[:8]}") as reader:
            deadline = time.monotonic() + DEADLINE_S
            while len(ended) < len(tasks) and time.monotonic() < deadline:
                ended.update((r.event.task_id, r.event) for r in reader.poll_batch(200)
                             if isinstance(r.event, EpisodeEnded))
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)
    assert set(ended) == {t.task_id for t in tasks}
    assert {e.device_id for e in ended.values()} == set(runner.device_ids)
    for task_id, episode in ended.items():
        assert episode.outcome == local[task_id].outcome == "finished"
        assert _steps(episode) == _steps(local[task_id]), task_id
    answers = _answers(bootstrap, observations)
    named = [a for a in answers if a.screen_as_step is not None]
    assert named and all(a.observation.screen == [] for a in named)  # unchanged screens not resent
    assert len(named) < len(answers)


def _answers(bootstrap: str, observations: Topic) -> list[ObservationRecorded]:
    """Every observation.recorded on the topic so far."""
    out: list[ObservationRecorded] = []
    with TypedBatchConsumer(bootstrap, [observations], f"answers-{uuid.uuid4().hex[:8]}") as reader:
        while batch := reader.poll_batch(1000):
            out += [r.event for r in batch if isinstance(r.event, ObservationRecorded)]
    return out


class _Answers:
    """A router that answers each request with the next of a script of replies (what a broken
    or hostile runner could send), so RemoteDevice's checks meet them without a broker."""

    def __init__(self, *replies: dict[str, Any]) -> None:
        self.replies = list(replies)

    def request(self, event: ActionRequested, timeout_s: float) -> ObservationRecorded:
        fields = self.replies.pop(0)
        observation = Observation(step=event.step, clock_ms=0, screen=fields.pop("screen", []))
        return ObservationRecorded(source="runner/0", correlation_id=event.correlation_id,
                                   causation_id=event.event_id, episode_id=event.episode_id,
                                   device_id=event.device_id, step=event.step,
                                   observation=observation, **fields)


SCREEN = [UIElement(text="Inbox")]


def test_a_screen_named_by_step_comes_back_whole() -> None:
    device = RemoteDevice("sim-0", _Answers({"screen": SCREEN}, {"screen_as_step": 0},  # type: ignore[arg-type]
                                            {"screen_as_step": 0}), tools={})
    device.bind("ep-1")
    assert device.reset(instance_of(_tasks(1)[0])).screen == SCREEN
    assert device.act(Wait()).screen == SCREEN
    assert device.act(Wait()).screen == SCREEN


@pytest.mark.parametrize(("replies", "said"), [
    (({"screen": SCREEN}, {"screen_as_step": 1}), "with the screen of step 1"),  # never sent
    (({"screen_as_step": 0},), "with the screen of step 0"),  # before any screen
    (({"screen": SCREEN}, {"screen": SCREEN, "screen_as_step": 0}), "send one or the other"),
])
def test_a_runner_naming_a_screen_it_never_sent_loses_the_device(replies: tuple[dict[str, Any], ...],
                                                                 said: str) -> None:
    device = RemoteDevice("sim-0", _Answers(*[dict(r) for r in replies]), tools={})  # type: ignore[arg-type]
    device.bind("ep-1")
    task = instance_of(_tasks(1)[0])
    with pytest.raises(DeviceLost, match=said):
        device.reset(task)
        device.act(Wait())
    with pytest.raises(DeviceLost):  # the episode is over on this device
        device.act(Wait())


def test_a_router_decodes_only_the_answers_to_its_own_requests(bootstrap: str, fresh_topic,
                                                               tmp_path: Path) -> None:
    """Two rollouts' routers read one observations topic: each takes its own answers and
    passes over the other's undecoded, so N rollouts do not each decode everyone's answers."""
    actions, observations = fresh_topic("flywheel.actions"), fresh_topic("flywheel.observations")
    mine = ReplyRouter(bootstrap, actions=actions, observations=observations, client_id="mine")
    other = ReplyRouter(bootstrap, actions=actions, observations=observations, client_id="other")
    try:
        with _runners(bootstrap, ["sim-5"], actions, observations):
            rollout = Rollout(RemoteDevice("sim-5", mine, timeout_s=20), load_policy("oracle"),
                              "oracle", BlobStore(tmp_path))
            _, episode = rollout.run(_tasks(1)[0])
            assert episode.outcome == "finished"
            requests = rollout.device.device._step
            deadline = time.monotonic() + DEADLINE_S
            while other.unmatched < requests and time.monotonic() < deadline:
                time.sleep(0.05)
    finally:
        mine.close()
        other.close()
    assert other._consumer.passed_over == requests and other._late == 0
    assert mine._consumer.passed_over == 0 and mine.unmatched == 0


#: Set by `_StopsTheServiceOnItsFirstAction`; the service under test stops on it.
SERVICE_STOP = threading.Event()


class _StopsTheServiceOnItsFirstAction(ScriptedOracle):
    """The oracle, which asks the rollout service to stop as its first episode begins."""

    def next_action(self, observation: Any) -> Any:
        SERVICE_STOP.set()
        return super().next_action(observation)


def test_a_stop_mid_batch_plays_no_more_tasks_and_leaves_the_batch_to_be_redelivered(
        bootstrap: str, fresh_topic, tmp_path: Path) -> None:
    """A stopping rollout finishes the episode in hand and plays none of the batch's other
    tasks (a batch of 64 through slow devices took ~40 s and outlived the stop grace); nothing
    is committed, so a restart in the same group plays every task, the first one again."""
    tasks_topic, episodes = fresh_topic("flywheel.tasks"), fresh_topic("flywheel.episodes")
    tasks = _tasks(6)
    group = f"r-{uuid.uuid4().hex[:8]}"
    with TypedProducer(bootstrap, client_id="test-generator") as producer:
        for task in tasks:
            producer.send(tasks_topic, task)
    policy = f"{__name__}:_StopsTheServiceOnItsFirstAction"
    settings = RolloutSettings(policy=policy, concurrency=1, group_id=group, poll_timeout_ms=500)
    SERVICE_STOP.clear()
    first = run_rollout(settings, bootstrap, tmp_path, SERVICE_STOP, tasks=tasks_topic,
                        episodes=episodes)
    assert first.episodes == 1, first.episodes
    again = RolloutSettings(policy="oracle", concurrency=1, group_id=group, poll_timeout_ms=500)
    stop = threading.Event()
    stats = run_rollout_until(again, bootstrap, tmp_path, stop, tasks_topic, episodes, len(tasks))
    assert stats.episodes == len(tasks), stats.episodes


def run_rollout_until(settings: RolloutSettings, bootstrap: str, data_dir: Path,
                      stop: threading.Event, tasks: Topic, episodes: Topic, count: int) -> Any:
    """Runs the rollout service until it has played `count` episodes (or the deadline)."""
    deadline = time.monotonic() + DEADLINE_S

    def on_batch(stats: Any) -> None:
        if stats.episodes >= count or time.monotonic() > deadline:
            stop.set()

    return run_rollout(settings, bootstrap, data_dir, stop, tasks=tasks, episodes=episodes,
                       on_batch=on_batch)
