"""The device farm on the real broker: each runner reads only its device's partition, and
actions published before a runner starts are executed, not lost."""

from __future__ import annotations

import time
import uuid

import pytest

from devices.sim import SimPhone
from schemas.episodes import ObservationRecorded
from services.device_runner.decide import RunnerMemory
from services.device_runner.farm import partition_for
from services.device_runner.settings import DeviceRunnerSettings
from streams.consumer import TypedBatchConsumer
from tests.services.device_runner.helpers import request
from tests.services.device_runner.test_loop import _publish, _serve_and_collect

pytestmark = pytest.mark.integration

DEADLINE_S = 60.0


def test_the_partition_is_the_one_the_producer_chose(bootstrap: str, fresh_topic) -> None:
    actions = fresh_topic("flywheel.actions")
    devices = [f"phone-{i}" for i in range(12)]
    _publish(bootstrap, actions, [request(d, "ep", 0) for d in devices])
    consumer = TypedBatchConsumer(bootstrap, [actions], f"probe-{uuid.uuid4().hex[:8]}")
    seen: dict[str, int] = {}
    deadline = time.monotonic() + DEADLINE_S
    try:
        while len(seen) < len(devices) and time.monotonic() < deadline:
            for record in consumer.poll_batch(200):
                seen[record.event.device_id] = record.partition
    finally:
        consumer.close()
    assert seen == {d: partition_for(d, actions.partitions) for d in devices}
    assert len(set(seen.values())) > 1  # the devices really spread over partitions


def test_runners_read_only_their_partition_and_miss_nothing_sent_before(
        bootstrap: str, fresh_topic) -> None:
    actions, observations = fresh_topic("flywheel.actions"), fresh_topic("flywheel.observations")
    first = "sim-0"
    second = next(f"sim-{i}" for i in range(1, 50)
                  if partition_for(f"sim-{i}", actions.partitions)
                  != partition_for(first, actions.partitions))
    # Sent before any runner exists: the default start position must still deliver them.
    _publish(bootstrap, actions, [request(d, f"ep-{d}", s) for s in range(3)
                                  for d in (first, second)])
    group = f"farm-{uuid.uuid4().hex[:8]}"
    memories = {d: RunnerMemory() for d in (first, second)}
    events = _serve_and_collect(bootstrap, actions, observations, [
        (DeviceRunnerSettings(device_id=d, group_id=group, poll_timeout_ms=100), SimPhone(d), memories[d])
        for d in (first, second)], 6)
    assert all(isinstance(e, ObservationRecorded) for e in events) and len(events) == 6
    for device in (first, second):
        assert memories[device].executed == 3
        assert memories[device].dropped == 0  # never saw the other device's actions
