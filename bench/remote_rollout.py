"""Benchmark of rollouts through the device runners: oracle episodes/s over the action and
observation topics against the same tasks rolled out in-process on SimPhones in the same run —
the price of the topics — at several numbers of concurrent episodes.

For each concurrency C (default 1, 8 and 64) the bench starts min(--runners, C) device runners
as processes (`python -m services.device_runner`, as deployed), each serving C / runners
simulated phones, and rolls out with C episodes at once (one thread and one RemoteDevice per
phone). The in-process baseline plays the same tasks on --runners SimPhones, one thread each.
Every figure is the median over --reps repetitions; runners are started and warmed up (their
first fetches, the first episode) before the clock starts, so only episodes are timed. The aim
is read at the highest concurrency.

How to run (from the repository root; not a test):

    .venv/bin/python bench/remote_rollout.py                 # 2 runners, C = 1, 8, 64, 3 reps
    .venv/bin/python bench/remote_rollout.py --concurrency 1,16 --episodes 4 --json out.json
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

if __package__ in (None, ""):  # run as a script from anywhere
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.report import aim_lines, write_report
from devices.blobs import BlobStore
from devices.sim import SimPhone
from devices.suite.registry import templates_for
from schemas.tasks import TaskProposed
from schemas.topics import TOPICS
from services.dataflow.ids import derived_id, phone_ids
from services.dataflow.tasks import task_event
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
ROOT = Path(__file__).resolve().parents[1]


def _start_runners(bootstrap: str, concurrency: int, runners: int, group: str, logs: Path
                   ) -> tuple[list[subprocess.Popen[bytes]], list[str]]:
    """min(runners, concurrency) runner processes sharing `concurrency` sim phones; the phones'
    device ids."""
    count = min(runners, concurrency)
    processes, ids = [], []
    for index in range(count):
        phones = concurrency // count + (index < concurrency % count)
        runner_id = f"sim-c{concurrency}-{index}"
        env = {**os.environ, "KAFKA_BOOTSTRAP_SERVERS": bootstrap, "PYTHONPATH": str(ROOT),
               "FLYWHEEL_DEVICE_RUNNER_DEVICE_ID": runner_id,
               "FLYWHEEL_DEVICE_RUNNER_PHONES": str(phones),
               "FLYWHEEL_DEVICE_RUNNER_GROUP_ID": group,
               "FLYWHEEL_DEVICE_RUNNER_START_FROM": "earliest",
               "FLYWHEEL_DEVICE_RUNNER_POLL_TIMEOUT_MS": "100"}
        log = (logs / f"{runner_id}.log").open("wb")
        processes.append(subprocess.Popen([sys.executable, "-m", "services.device_runner"],
                                          cwd=ROOT, env=env, stdout=log, stderr=log))
        ids.extend(phone_ids(runner_id, phones))
    return processes, ids


def _stop_runners(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runners", type=int, default=2, help="Runner processes at most (and "
                        "in-process worker threads).")
    parser.add_argument("--concurrency", default="1,8,64",
                        help="Comma-separated numbers of episodes at once through the runners.")
    parser.add_argument("--episodes", type=int, default=4,
                        help="Episodes per concurrent phone in one repetition (at least 24 in all).")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    levels = sorted({int(c) for c in args.concurrency.split(",")})
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        blobs = BlobStore(folder / "blobs")
        local = [Rollout(SimPhone(f"local-{i}"), load_policy("oracle"), "oracle", blobs)
                 for i in range(args.runners)]
        runs: dict[str, list[float]] = {"in_process_episodes_per_s": []}
        with LocalBroker.on_free_port(folder / "broker") as broker:
            create_topics(broker.bootstrap, [TOPICS["flywheel.actions"],
                                             TOPICS["flywheel.observations"]])
            router = ReplyRouter(broker.bootstrap)
            for concurrency in levels:
                tasks = _tasks(max(24, args.episodes * concurrency))
                processes, ids = _start_runners(broker.bootstrap, concurrency, args.runners,
                                                f"bench-{uuid.uuid4().hex[:8]}", folder)
                try:
                    remote = [Rollout(RemoteDevice(d, router, timeout_s=60), load_policy("oracle"),
                                      "oracle", blobs) for d in ids]
                    _rate(remote, tasks[: len(ids)])  # warm-up: runner start, first fetches
                    key = f"runners_episodes_per_s@{concurrency}"
                    runs[key] = []
                    for rep in range(args.reps):
                        rate, ok_local = _rate(local, tasks)
                        runs["in_process_episodes_per_s"].append(rate)
                        rate, ok_remote = _rate(remote, tasks)
                        runs[key].append(rate)
                        print(f"C={concurrency} rep {rep + 1}/{args.reps}: in-process "
                              f"{runs['in_process_episodes_per_s'][-1]:.1f} episodes/s "
                              f"({ok_local}/{len(tasks)} finished), through "
                              f"{len(processes)} runner(s) with {len(ids)} phones {rate:.1f} "
                              f"episodes/s ({ok_remote}/{len(tasks)} finished)", flush=True)
                finally:
                    _stop_runners(processes)
            router.close()
    in_process = statistics.median(runs["in_process_episodes_per_s"])
    print(f"\noracle episodes, in-process on {args.runners} thread(s): {in_process:.1f} episodes/s "
          f"(median of {len(runs['in_process_episodes_per_s'])})")
    for concurrency in levels:
        through = statistics.median(runs[f"runners_episodes_per_s@{concurrency}"])
        print(f"  {concurrency:>4} at once through the runners: {through:7.1f} episodes/s, "
              f"ratio {through / in_process:.3f}")
    top = statistics.median(runs[f"runners_episodes_per_s@{levels[-1]}"])
    aims = {"through runners / in-process episodes/s": (top / in_process, AIM_RATIO)}
    for line in aim_lines(aims):
        print(line)
    if args.json is not None:
        write_report(args.json, "remote_rollout", runs, aims, runners=args.runners,
                     concurrency=levels, episodes_per_phone=args.episodes, reps=args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
