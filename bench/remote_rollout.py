"""Benchmark of rollouts through the device runners: oracle episodes/s over the action and
observation topics (N sim device runners on the local broker, one RemoteDevice each) against
the same tasks rolled out in-process on SimPhones in the same run — the price of the topics.

Every figure is the median over --reps repetitions of the same task list; the in-process
baseline uses as many worker threads as there are runners. Runners and the reply reader are
started (and their partitions positioned) before the clock starts, so only episodes are timed.

How to run (from the repository root; not a test):

    .venv/bin/python bench/remote_rollout.py                 # 2 runners, 24 tasks, 3 reps
    .venv/bin/python bench/remote_rollout.py --runners 4 --tasks 48 --reps 5 --json out.json
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

if __package__ in (None, ""):  # run as a script from anywhere
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.report import write_report
from devices.blobs import BlobStore
from devices.harness.harness import Harness
from devices.sim import SimPhone
from devices.suite.registry import templates_for
from schemas.tasks import TaskProposed
from schemas.topics import TOPICS
from services.dataflow.ids import derived_id
from services.dataflow.tasks import task_event
from services.device_runner.loop import run_device_runner
from services.device_runner.settings import DeviceRunnerSettings
from services.rollout.engine import Rollout
from services.rollout.policies import load_policy
from services.rollout.remote import RemoteDevice, ReplyRouter
from streams.admin import create_topics
from streams.broker import LocalBroker

logger = logging.getLogger("bench.remote_rollout")


def _tasks(count: int) -> list[TaskProposed]:
    templates = templates_for("train")
    out = []
    for i in range(count):
        task = templates[(i * 7) % len(templates)].generate("train", i, 0)
        out.append(task_event(task, tier="easy", event_id=derived_id("bench", task.task_id),
                              source="bench/0", correlation_id=task.task_id))
    return out


def _rate(workers: list[Rollout], tasks: list[TaskProposed]) -> tuple[float, int]:
    """Episodes/s of `tasks` shared round-robin over `workers` (one thread each)."""
    shares = [tasks[i::len(workers)] for i in range(len(workers))]
    began = time.perf_counter()
    with ThreadPoolExecutor(len(workers)) as pool:
        results = list(pool.map(lambda ws: [ws[0].run(t)[1] for t in ws[1]],
                                zip(workers, shares, strict=True)))
    wall = time.perf_counter() - began
    finished = sum(e.outcome == "finished" for share in results for e in share)
    return len(tasks) / wall, finished


#: The issue's aim for episodes through the runners as a share of in-process episodes.
AIM_RATIO = 0.3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runners", type=int, default=2)
    parser.add_argument("--tasks", type=int, default=24)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    tasks = _tasks(args.tasks)
    ids = [f"sim-{i}" for i in range(args.runners)]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        blobs = BlobStore(folder / "blobs")
        local = [Rollout(SimPhone(f"local-{i}"), load_policy("oracle"), "oracle", blobs)
                 for i in range(args.runners)]
        with LocalBroker.on_free_port(folder / "broker") as broker:
            run = uuid.uuid4().hex[:8]
            actions = TOPICS["flywheel.actions"].renamed(f"bench-actions-{run}")
            observations = TOPICS["flywheel.observations"].renamed(f"bench-obs-{run}")
            create_topics(broker.bootstrap, [actions, observations])
            stop = threading.Event()
            threads = []
            for device_id in ids:
                ready = threading.Event()
                settings = DeviceRunnerSettings(device_id=device_id, group_id=f"bench-{run}",
                                                start_from="earliest", poll_timeout_ms=100)
                thread = threading.Thread(target=run_device_runner, daemon=True, args=(
                    settings, Harness(SimPhone(device_id)), stop), kwargs={
                    "bootstrap": broker.bootstrap, "actions": actions,
                    "observations": observations, "on_ready": ready.set})
                thread.start()
                ready.wait(60)
                threads.append(thread)
            router = ReplyRouter(broker.bootstrap, actions=actions, observations=observations)
            remote = [Rollout(RemoteDevice(d, router, timeout_s=30), load_policy("oracle"),
                              "oracle", blobs) for d in ids]
            _rate(remote, tasks[: len(ids)])  # warm-up: first fetches, connections
            local_rates, remote_rates = [], []
            for rep in range(args.reps):
                rate, ok_local = _rate(local, tasks)
                local_rates.append(rate)
                rate, ok_remote = _rate(remote, tasks)
                remote_rates.append(rate)
                print(f"rep {rep + 1}/{args.reps}: in-process {local_rates[-1]:.1f} episodes/s "
                      f"({ok_local} finished), through {len(ids)} runners {rate:.1f} "
                      f"episodes/s ({ok_remote} finished)", flush=True)
            router.close()
            stop.set()
            for thread in threads:
                thread.join(30)
    in_process, through = statistics.median(local_rates), statistics.median(remote_rates)
    print(f"\n{len(tasks)} oracle episodes, {len(ids)} runners/workers, median of {args.reps}: "
          f"in-process {in_process:.1f} episodes/s, through the runners {through:.1f} "
          f"episodes/s, ratio {through / in_process:.3f}")
    if args.json is not None:
        write_report(args.json, "remote_rollout",
                     {"in_process_episodes_per_s": local_rates,
                      "runners_episodes_per_s": remote_rates},
                     {"through runners / in-process episodes/s": (through / in_process, AIM_RATIO)},
                     runners=args.runners, tasks=args.tasks, reps=args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
