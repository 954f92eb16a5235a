"""The rollout loop: poll tasks, run their episodes on N simulated phones at once, publish
`episode.started` / `episode.ended`, then commit (at-least-once; episode and event ids are
derived from the task, so a redelivered task repeats the same episode events). Through device
runners, a redelivered task is played again on the phone: its `action.requested` ids are new
(the runner tells a new attempt's step 0 from a redelivered request by that id)."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from devices.blobs import BlobStore
from schemas.tasks import TaskProposed
from schemas.topics import TOPICS, Topic
from services.dataflow.tasks import blob_dir
from services.rollout.engine import Rollout
from services.rollout.policies import load_policy
from services.rollout.remote import ACTIONS, OBSERVATIONS, RemoteDevice, ReplyRouter
from services.rollout.settings import RolloutSettings
from streams.consumer import TypedBatchConsumer
from streams.producer import TypedProducer

__all__ = ["EPISODES", "TASKS", "RolloutStats", "run_rollout", "stats_path"]

logger = logging.getLogger(__name__)

TASKS = TOPICS["flywheel.tasks"]
EPISODES = TOPICS["flywheel.episodes"]
SEND_TIMEOUT_S = 30.0
#: The local broker holds an empty fetch for the whole max wait even when tasks arrive
#: meanwhile (kafka-python's default is 500 ms): 50 ms keeps a task's wait short.
FETCH_MAX_WAIT_MS = 50


@dataclass
class RolloutStats:
    episodes: int = 0
    steps: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    busy_s: float = 0.0
    device_s: float = 0.0
    concurrency: int = 1
    started_at: float = field(default_factory=time.monotonic)

    def to_json(self) -> dict[str, object]:
        wall = max(1e-9, time.monotonic() - self.started_at)
        return {"episodes": self.episodes, "steps": self.steps, "outcomes": dict(self.outcomes),
                "wall_s": wall, "busy_s": self.busy_s, "device_s": self.device_s,
                "concurrency": self.concurrency,
                "sim_utilisation": self.device_s / (wall * self.concurrency)}


def stats_path(data_dir: str | Path) -> Path:
    """Where the rollout writes its counters (JSON) when it stops: for bench/loop.py."""
    return Path(data_dir) / "services" / "rollout-stats.json"


def run_rollout(settings: RolloutSettings, bootstrap: str, data_dir: str | Path,
                stop: threading.Event, *, tasks: Topic = TASKS, episodes: Topic = EPISODES,
                stats: RolloutStats | None = None,
                on_batch: Callable[[RolloutStats], None] | None = None,
                actions: Topic = ACTIONS, observations: Topic = OBSERVATIONS) -> RolloutStats:
    """Serves tasks until `stop` is set: on in-process SimPhones, or, when
    `settings.devices` names devices, through their runners over `actions`/`observations`."""
    remote = settings.device_ids
    concurrency = len(remote) or settings.concurrency
    stats = stats if stats is not None else RolloutStats(concurrency=concurrency)
    router = (ReplyRouter(bootstrap, actions=actions, observations=observations)
              if remote else None)
    workers = _workers(settings, data_dir, router)
    pool = ThreadPoolExecutor(concurrency, thread_name_prefix="rollout")
    try:
        with TypedBatchConsumer(bootstrap, [tasks], settings.group_id, client_id="rollout",
                                max_records=settings.max_batch,
                                fetch_max_wait_ms=FETCH_MAX_WAIT_MS) as consumer, \
                TypedProducer(bootstrap, client_id="rollout") as producer:
            while not stop.is_set():
                batch = [r.event for r in consumer.poll_batch(settings.poll_timeout_ms)
                         if isinstance(r.event, TaskProposed)]
                if batch and not _play_batch(batch, workers, pool, producer, episodes, stats, stop):
                    break  # stopped mid-batch: uncommitted, so the unplayed tasks are redelivered
                consumer.commit()
                if batch and on_batch is not None:
                    on_batch(stats)
    finally:
        path = stats_path(data_dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(stats.to_json(), indent=2))
        pool.shutdown(wait=False, cancel_futures=True)
        for worker in workers:
            worker.close()
            worker.device.close()
        if router is not None:
            router.close()
    return stats


def _workers(settings: RolloutSettings, data_dir: str | Path, router: ReplyRouter | None
             ) -> list[Rollout]:
    """One Rollout per device (a runner's RemoteDevice, else an in-process SimPhone), each in
    the promoted harness (the built-in spec until the evolver promotes one, so episodes name
    that version and promotions reach real episodes)."""
    from devices.harness.harness import Harness
    from devices.sim import SimPhone
    from devices.sim.settings import load_settings as load_sim_settings
    from services.dataflow.registry import HarnessRegistry

    remote = settings.device_ids
    devices: list = []
    if router is not None:
        environment = "sim" if all(d.startswith("sim") for d in remote) else "device"
        devices = [RemoteDevice(d, router, timeout_s=settings.device_timeout_s) for d in remote]
        logger.info("rolling out through the runners of %s", ", ".join(remote))
    else:
        environment = "sim"
        sim = load_sim_settings()  # FLYWHEEL_SIM_*: a bad value stops the start with its variable
        devices = [SimPhone.from_settings(f"rollout-sim-{i}", sim)
                   for i in range(settings.concurrency)]
    spec = HarnessRegistry.at_data_dir(data_dir).current_spec()
    logger.info("rollouts run in harness %s", spec.version)
    blobs = BlobStore(blob_dir(data_dir))
    return [Rollout(Harness(device, spec), load_policy(settings.policy, i, recovery=settings.recovery),
                    settings.policy, blobs, environment=environment,
                    call_timeout_s=settings.call_timeout_s, suite_seed=settings.suite_seed)
            for i, device in enumerate(devices)]


def _play_batch(batch: list[TaskProposed], workers: list[Rollout], pool: ThreadPoolExecutor,
                producer: TypedProducer, episodes: Topic, stats: RolloutStats,
                stop: threading.Event) -> bool:
    """Plays a batch's tasks across the workers and sends their episodes (acknowledged before
    this returns); False when `stop` came mid-batch and some tasks were left unplayed."""

    def run_share(worker: Rollout, share: list[TaskProposed]) -> list:
        done = []
        for task in share:
            if stop.is_set():
                break
            done.append(worker.run(task))
        return done

    began = time.monotonic()
    shares = [batch[i::len(workers)] for i in range(len(workers))]
    futures = [pool.submit(run_share, w, s) for w, s in zip(workers, shares, strict=True) if s]
    sent = []
    for future in futures:
        for started, ended in future.result():
            sent.append(producer.send(episodes, started))
            sent.append(producer.send(episodes, ended))
            stats.episodes += 1
            stats.steps += len(ended.steps)
            stats.outcomes[ended.outcome] += 1
    producer.flush()
    for future in sent:  # a failed send raises: no commit, so redelivery
        future.get(timeout=SEND_TIMEOUT_S)
    stats.busy_s += time.monotonic() - began
    stats.device_s = sum(w.device_s for w in workers)
    return len(sent) == 2 * len(batch)
