"""The runner's thin loop: poll its devices' partitions, handle each action, publish, commit.

A runner serves one phone, or several simulated ones (`settings.phones`): every batch then
holds actions of many episodes, handled one after another and answered with one flush, so the
round trips over the topics overlap instead of adding up."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from kafka.producer.future import FutureRecordMetadata

from devices.protocol import Device, declares_bounded_calls
from schemas.episodes import ActionRequested
from schemas.topics import TOPICS, Topic
from services.device_runner.decide import RunnerMemory
from services.device_runner.execute import handle
from services.device_runner.farm import devices_partitions
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


def run_device_runner(settings: DeviceRunnerSettings, device: Device | Sequence[Device],
                      stop_event: threading.Event,
                      *, bootstrap: str | None = None, actions: Topic = ACTIONS,
                      observations: Topic = OBSERVATIONS, memory: RunnerMemory | None = None,
                      on_batch: Callable[[RunnerMemory], None] | None = None,
                      on_ready: Callable[[], None] | None = None) -> RunnerMemory:
    """Serves `device` (or each of a sequence of them) until `stop_event` is set; returns the
    counts it kept.

    The runner reads only the partitions its devices' actions are keyed to (see farm.py).
    Each batch's events are published and flushed before its offsets are committed
    (at-least-once); a redelivered action is answered from `memory`, not run again.
    Without `bootstrap`, the configured or local broker is used (and stopped again if
    this call started it). The caller owns the devices and closes them.
    """
    devices = list(device) if isinstance(device, (list, tuple)) else [device]
    by_id = {d.device_id: d for d in devices}
    if sorted(by_id) != sorted(settings.device_ids) or len(by_id) != len(devices):
        raise ValueError(f"the runner is set up for device(s) {', '.join(settings.device_ids)} "
                         f"but was given {', '.join(d.device_id for d in devices)}; pass the "
                         f"matching --device-id (and phones)")
    started = None
    if bootstrap is None:
        bootstrap, started = ensure_broker(load_bus_settings())
    memory = memory if memory is not None else RunnerMemory()
    # A phone whose calls cannot block (a SimPhone) is called inline: no thread hop per action.
    guards = {d.device_id: ActionGuard(None if declares_bounded_calls(d) else settings.action_timeout_s)
              for d in devices}
    first = devices[0]  # another runner's action on a shared partition is dropped under it
    try:
        create_topics(bootstrap, [actions, observations])
        client_id = f"device-runner-{settings.device_id}"
        with TypedBatchConsumer(bootstrap, [actions], settings.group_for(), client_id=client_id,
                                auto_offset_reset=settings.start_from,
                                partitions=devices_partitions(list(by_id)),
                                fetch_max_wait_ms=FETCH_MAX_WAIT_MS) as consumer, \
                TypedProducer(bootstrap, client_id=client_id) as producer:
            partitions = sorted({tp.partition for tp in consumer.assignment()})
            logger.info("device runner for %s reads %s%s, offsets under %s",
                        _named(settings.device_ids), actions.name, partitions,
                        settings.group_for())
            if on_ready is not None:
                on_ready()
            while not stop_event.is_set():
                batch = consumer.poll_batch(settings.poll_timeout_ms)

                def handle_record(record: Record) -> list[FutureRecordMetadata]:
                    event = record.event
                    if not isinstance(event, ActionRequested):  # the topic's union forbids it
                        return []
                    target = by_id.get(event.device_id, first)
                    produced = handle(target, event, memory, suite_seed=settings.suite_seed,
                                      guard=guards[target.device_id],
                                      stale_after_s=settings.stale_after_s)
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
        for guard in guards.values():
            guard.close()
        if started is not None:
            started.stop()
    return memory


def _named(device_ids: list[str]) -> str:
    """The devices for a log line: all of a few, the first and last of many."""
    if len(device_ids) <= 3:
        return ", ".join(device_ids)
    return f"{len(device_ids)} phones ({device_ids[0]} … {device_ids[-1]})"
