"""Integration tests of the runner loop against the real local broker, with fresh topics."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from devices.sim import SimPhone
from schemas.envelope import Event
from schemas.episodes import ActionRequested, DeviceFailed, ObservationRecorded
from schemas.topics import Topic
from services.device_runner.decide import RunnerMemory
from services.device_runner.farm import partition_for
from services.device_runner.loop import run_device_runner
from services.device_runner.settings import DeviceRunnerSettings
from streams.consumer import TypedBatchConsumer
from streams.producer import TypedProducer
from tests.services.device_runner.helpers import LosingPhone, request, step_of

pytestmark = pytest.mark.integration

#: Only a guard against a hung test: the broker answers in milliseconds, the group join in ~3 s.
COLLECT_DEADLINE_S = 60.0


def _publish(bootstrap: str, topic: Topic, events: list[ActionRequested]) -> None:
    with TypedProducer(bootstrap, client_id="test-rollout") as producer:
        for event in events:
            producer.send(topic, event)
        producer.flush()


@contextmanager
def _runner(bootstrap: str, phone: Any, actions: Topic, observations: Topic, group: str,
            memory: RunnerMemory | None = None) -> Iterator[RunnerMemory]:
    phones = phone if isinstance(phone, list) else [phone]  # several: ids '<runner>-0' …
    runner_id = phone.device_id if phones is not phone else phones[0].device_id.rpartition("-")[0]
    settings = DeviceRunnerSettings(device_id=runner_id, phones=len(phones), group_id=group,
                                    start_from="earliest", poll_timeout_ms=100)
    memory = memory if memory is not None else RunnerMemory()
    stop = threading.Event()
    errors: list[BaseException] = []

    def work() -> None:
        try:
            run_device_runner(settings, phone, stop, bootstrap=bootstrap, actions=actions,
                              observations=observations, memory=memory)
        except BaseException as error:  # noqa: BLE001 - re-raised in the test thread
            errors.append(error)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    try:
        yield memory
    finally:
        stop.set()
        thread.join(30)
    assert not thread.is_alive(), "the runner did not stop"
    if errors:
        raise errors[0]


class _Collector:
    """Reads the observations topic from the start in its own group."""

    def __init__(self, bootstrap: str, topic: Topic) -> None:
        self.consumer = TypedBatchConsumer(bootstrap, [topic], f"reader-{uuid.uuid4().hex[:8]}",
                                           client_id="test-reader")
        self.events: list[Event] = []

    def until(self, done: Callable[[list[Event]], bool]) -> list[Event]:
        deadline = time.monotonic() + COLLECT_DEADLINE_S
        while not done(self.events) and time.monotonic() < deadline:
            self.events.extend(r.event for r in self.consumer.poll_batch(200))
        return self.events

    def close(self) -> None:
        self.consumer.close()


def _serve_and_collect(bootstrap: str, actions: Topic, observations: Topic,
                       runners: list[tuple[DeviceRunnerSettings, Any, RunnerMemory]],
                       count: int) -> list[Event]:
    """Runs each (settings, phone, memory) runner in its own thread until `count` observations
    are read from the start of `observations`, then stops them all."""
    stop = threading.Event()
    threads = [threading.Thread(target=run_device_runner, args=(settings, phone, stop), kwargs={
        "bootstrap": bootstrap, "actions": actions, "observations": observations,
        "memory": memory}, daemon=True) for settings, phone, memory in runners]
    for thread in threads:
        thread.start()
    collector = _Collector(bootstrap, observations)
    try:
        return collector.until(lambda seen: len(seen) >= count)
    finally:
        collector.close()
        stop.set()
        for thread in threads:
            thread.join(30)


def test_each_runner_serves_only_its_own_device_in_order(bootstrap: str, fresh_topic) -> None:
    actions, observations = fresh_topic("flywheel.actions"), fresh_topic("flywheel.observations")
    group = f"runners-{uuid.uuid4().hex[:8]}"
    _publish(bootstrap, actions, [request(device, f"ep-{device}", step)
                                  for step in range(4) for device in ("sim-0", "sim-1")])
    phones = [SimPhone("sim-0"), SimPhone("sim-1")]
    collector = _Collector(bootstrap, observations)
    try:
        with _runner(bootstrap, phones[0], actions, observations, group) as m0, \
                _runner(bootstrap, phones[1], actions, observations, group) as m1:
            events = collector.until(lambda seen: len(seen) >= 8)
    finally:
        collector.close()
    assert all(isinstance(e, ObservationRecorded) for e in events)
    for device in ("sim-0", "sim-1"):
        mine = [e for e in events if e.device_id == device]
        assert {e.episode_id for e in mine} == {f"ep-{device}"}
        assert [e.step for e in mine] == [0, 1, 2, 3]
        assert [e.observation.step for e in mine] == [1, 2, 3, 4]
    assert (m0.executed, m1.executed) == (4, 4)
    assert [step_of(p) for p in phones] == [4, 4]


def test_one_runner_serves_several_phones_each_in_its_own_episode(bootstrap: str,
                                                                  fresh_topic) -> None:
    """A runner of three sim phones: the actions of their episodes interleave in its batches,
    each phone runs only its own, one phone lost mid-episode fails only its episode, and an
    action for a phone it does not serve (on a partition it reads) is dropped."""
    actions, observations = fresh_topic("flywheel.actions"), fresh_topic("flywheel.observations")
    group = f"runners-{uuid.uuid4().hex[:8]}"
    phones = [SimPhone("hub-0"), LosingPhone("hub-1", lose_at=2), SimPhone("hub-2")]
    read = {partition_for(p.device_id, actions.partitions) for p in phones}
    stranger = next(f"other-{k}" for k in range(1000)
                    if partition_for(f"other-{k}", actions.partitions) in read)
    _publish(bootstrap, actions, [request(p.device_id, f"ep-{p.device_id}", step)
                                  for step in range(3) for p in phones]
             + [request(stranger, "ep-stranger", 0)])
    collector = _Collector(bootstrap, observations)
    try:
        with _runner(bootstrap, phones, actions, observations, group) as memory:
            events = collector.until(lambda seen: len(seen) >= 9)
            deadline = time.monotonic() + COLLECT_DEADLINE_S
            while memory.dropped < 1 and time.monotonic() < deadline:
                time.sleep(0.05)
    finally:
        collector.close()
    by_device = {p.device_id: [(type(e).__name__, e.step) for e in events
                               if e.device_id == p.device_id] for p in phones}
    served = [("ObservationRecorded", 0), ("ObservationRecorded", 1), ("ObservationRecorded", 2)]
    assert by_device == {"hub-0": served, "hub-2": served,
                         "hub-1": [("ObservationRecorded", 0), ("DeviceFailed", 1),
                                   ("DeviceFailed", 2)]}  # the lost phone holds no episode
    assert {e.episode_id for e in events if e.device_id == "hub-0"} == {"ep-hub-0"}
    assert [step_of(p) for p in (phones[0], phones[2])] == [3, 3]
    assert (memory.executed, memory.failed, memory.dropped) == (7, 2, 1)
    assert not any(e.device_id == stranger for e in events)


def test_a_runner_given_other_phones_than_its_settings_name_refuses_to_start(bootstrap: str) -> None:
    settings = DeviceRunnerSettings(device_id="hub", phones=2)
    with pytest.raises(ValueError, match="set up for device"):
        run_device_runner(settings, [SimPhone("hub-0"), SimPhone("hub-7")], threading.Event(),
                          bootstrap=bootstrap)
    with pytest.raises(ValueError, match="set up for device"):
        run_device_runner(settings, [SimPhone("hub-0"), SimPhone("hub-0")], threading.Event(),
                          bootstrap=bootstrap)


def test_a_lost_device_fails_its_episode_and_the_runner_goes_on(bootstrap: str,
                                                               fresh_topic) -> None:
    actions, observations = fresh_topic("flywheel.actions"), fresh_topic("flywheel.observations")
    group = f"runners-{uuid.uuid4().hex[:8]}"
    phone = LosingPhone("sim-2", lose_at=2)
    redelivered = request("sim-2", "ep-d", 1)
    _publish(bootstrap, actions, [
        request("sim-2", "ep-c", 0), request("sim-2", "ep-c", 1),  # lost on the second act
        request("sim-2", "ep-d", 0), redelivered, redelivered,  # the same action twice
    ])
    collector = _Collector(bootstrap, observations)
    try:
        with _runner(bootstrap, phone, actions, observations, group) as memory:
            events = collector.until(lambda seen: len(seen) >= 5)
    finally:
        collector.close()
    # Observations are keyed by episode: order holds within an episode, not across them.
    ep_c = [e for e in events if e.episode_id == "ep-c"]
    ep_d = [e for e in events if e.episode_id == "ep-d"]
    assert [(type(e).__name__, e.step) for e in ep_c] == [("ObservationRecorded", 0),
                                                         ("DeviceFailed", 1)]
    assert [(type(e).__name__, e.step) for e in ep_d] == [("ObservationRecorded", 0),
                                                         ("ObservationRecorded", 1),
                                                         ("ObservationRecorded", 1)]
    failed = ep_c[1]
    assert isinstance(failed, DeviceFailed) and failed.reason == "disconnected"
    assert ep_d[1].event_id == ep_d[2].event_id  # re-published, not executed again
    assert phone.acts == 4 and step_of(phone) == 2  # 4 calls (one lost); the repeat made none
    assert (memory.executed, memory.replayed, memory.failed) == (3, 1, 1)


def test_a_restarted_runner_resumes_after_its_committed_actions(bootstrap: str,
                                                                fresh_topic) -> None:
    actions, observations = fresh_topic("flywheel.actions"), fresh_topic("flywheel.observations")
    group = f"runners-{uuid.uuid4().hex[:8]}"
    phone = SimPhone("sim-3")
    _publish(bootstrap, actions, [request("sim-3", "ep-e", i) for i in range(2)])
    collector = _Collector(bootstrap, observations)
    try:
        with _runner(bootstrap, phone, actions, observations, group):
            collector.until(lambda seen: len(seen) >= 2)
        _publish(bootstrap, actions, [request("sim-3", "ep-e", 2)])
        with _runner(bootstrap, phone, actions, observations, group) as second:
            events = collector.until(lambda seen: len(seen) >= 3)
    finally:
        collector.close()
    # The second runner only ran the new action; the committed ones were not redelivered.
    # Its memory is empty, so it cannot vouch for the phone's state and fails the episode.
    assert second.executed == 0 and second.failed == 1
    assert isinstance(events[2], DeviceFailed) and events[2].reason == "unavailable"
    assert step_of(phone) == 2


def test_a_phone_that_cannot_block_is_called_inline_and_any_other_behind_the_deadline(
        bootstrap: str, fresh_topic, monkeypatch: pytest.MonkeyPatch) -> None:
    """A SimPhone declares `bounded_calls`: the runner calls it on its own thread (no thread hop
    per action); a subclass does not inherit the promise and runs on the guard's worker thread,
    where a hang would end in a timeout instead of hanging the runner."""
    threads: dict[str, set[str]] = {}
    real_act = SimPhone.act

    def recording_act(self: SimPhone, action: Any) -> Any:
        threads.setdefault(self.device_id, set()).add(threading.current_thread().name)
        return real_act(self, action)

    class CarefulPhone(SimPhone):
        """Overrides nothing but may as well wait on a network: no `bounded_calls` of its own."""

    monkeypatch.setattr(SimPhone, "act", recording_act)
    actions, observations = fresh_topic("flywheel.actions"), fresh_topic("flywheel.observations")
    _publish(bootstrap, actions, [request(device, f"ep-{device}", step)
                                  for step in range(3) for device in ("sim-0", "sim-1")])
    collector = _Collector(bootstrap, observations)
    try:
        with _runner(bootstrap, SimPhone("sim-0"), actions, observations, "g-inline"), \
                _runner(bootstrap, CarefulPhone("sim-1"), actions, observations, "g-inline"):
            collector.until(lambda seen: len(seen) >= 6)
    finally:
        collector.close()
    assert threads["sim-0"] and not any(name.startswith("device-call") for name in threads["sim-0"])
    assert threads["sim-1"] and all(name.startswith("device-call") for name in threads["sim-1"])
