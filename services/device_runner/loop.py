"""The runner's thin loop: poll its device's partition, handle each action, publish, commit."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from kafka.producer.future import FutureRecordMetadata

from devices.protocol import Device
from schemas.episodes import ActionRequested
from schemas.topics import TOPICS, Topic
from services.device_runner.decide import RunnerMemory
from services.device_runner.execute import handle
from services.device_runner.farm import device_partitions
from services.device_runner.guard import ActionGuard
from services.device_runner.settings import DeviceRunnerSettings
from streams.admin import create_topics
from streams.broker import ensure_broker
from streams.consumer import Record, TypedBatchConsumer
from streams.producer import TypedProducer
from streams.settings import load_bus_settings

__all__ = ["ACTIONS", "OBSERVATIONS", "run_device_runner"]

logger = logging.getLogger(__name__)

#: The topics this service reads and writes (tests pass renamed copies).
ACTIONS = TOPICS["flywheel.actions"]
OBSERVATIONS = TOPICS["flywheel.observations"]
#: After flush() every future is resolved; the timeout only guards against a broken client.
SEND_TIMEOUT_S = 30.0
#: The local broker holds an empty fetch for the whole max wait even when an action arrives
#: meanwhile (aiokafka's default is 500 ms): 20 ms keeps a remote step's round trip short.
FETCH_MAX_WAIT_MS = 20


def run_device_runner(settings: DeviceRunnerSettings, device: Device, stop_event: threading.Event,
                      *, bootstrap: str | None = None, actions: Topic = ACTIONS,
                      observations: Topic = OBSERVATIONS, memory: RunnerMemory | None = None,
                      on_batch: Callable[[RunnerMemory], None] | None = None,
                      on_ready: Callable[[], None] | None = None) -> RunnerMemory:
    """Serves `device` until `stop_event` is set; returns the counts it kept.

    The runner reads only the partition its device's actions are keyed to (see farm.py).
    Each batch's events are published and flushed before its offsets are committed
    (at-least-once); a redelivered action is answered from `memory`, not run again.
    Without `bootstrap`, the configured or local broker is used (and stopped again if
    this call started it). The caller owns `device` and closes it.
    """
    if device.device_id != settings.device_id:
        raise ValueError(f"the runner is set up for device {settings.device_id!r} but was given "
                         f"{device.device_id!r}; pass the matching --device-id")
    started = None
    if bootstrap is None:
        bootstrap, started = ensure_broker(load_bus_settings())
    memory = memory if memory is not None else RunnerMemory()
    guard = ActionGuard(settings.action_timeout_s)
    try:
        create_topics(bootstrap, [actions, observations])
        client_id = f"device-runner-{settings.device_id}"
        with TypedBatchConsumer(bootstrap, [actions], settings.group_for(), client_id=client_id,
                                auto_offset_reset=settings.start_from,
                                partitions=device_partitions(settings.device_id),
                                fetch_max_wait_ms=FETCH_MAX_WAIT_MS) as consumer, \
                TypedProducer(bootstrap, client_id=client_id) as producer:
            (partition,) = {tp.partition for tp in consumer.assignment()}
            logger.info("device runner for %s reads %s[%d], offsets under %s",
                        settings.device_id, actions.name, partition, settings.group_for())
            if on_ready is not None:
                on_ready()
            while not stop_event.is_set():
                batch = consumer.poll_batch(settings.poll_timeout_ms)

                def handle_record(record: Record) -> list[FutureRecordMetadata]:
                    event = record.event
                    if not isinstance(event, ActionRequested):  # the topic's union forbids it
                        return []
                    produced = handle(device, event, memory, suite_seed=settings.suite_seed,
                                      guard=guard, stale_after_s=settings.stale_after_s)
                    return [producer.send(observations, e) for e in produced]

                # A record whose handling raises is dead-lettered; the others go on.
                sent = [f for futures in consumer.handle_each(batch, handle_record)
                        for f in futures]
                if sent:
                    producer.flush()
                    for future in sent:  # raises if a send failed: no commit, so redelivery
                        future.get(timeout=SEND_TIMEOUT_S)
                consumer.commit()  # also moves past dead-lettered records
                if batch and on_batch is not None:
                    on_batch(memory)
    finally:
        guard.close()
        if started is not None:
            started.stop()
    return memory
