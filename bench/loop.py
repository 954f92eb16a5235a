"""Benchmark of the whole data flywheel: episodes/s and examples/s through the topics.

Each repetition starts a fresh local broker and the four services (generator, rollout with
the oracle, verifier, curator) as `flywheel run` does, and times them until the curator's
snapshot holds --examples approved examples. By default the rollout plays on in-process phones
(`flywheel run --sim-devices 0`; aim 0.5); `--sim-devices N` plays through N sim phones served
by a device runner in this process, `flywheel run`'s default path, every phone step an event
(aim 0.3; `--runner-per-phone`: one runner per phone, the old layout). Against it, in the same
run, the same tasks (read back from the tasks topic's store) are run in process: oracle on a SimPhone,
final state to JSON, scored from that JSON — what `flywheel suite eval` does per task. The
ratio is the price of going through the topics. Sim utilisation is the rollout's device-call
time over its wall time x concurrency. Every figure is a median over --reps.

How to run (from the repository root; not a test):

    .venv/bin/python bench/loop.py                 # 3 repetitions of 500 examples
    .venv/bin/python bench/loop.py --examples 200 --reps 5 --json loop.json
    .venv/bin/python bench/loop.py --examples 200 --sim-devices 4   # flywheel run's default path
    .venv/bin/python bench/loop.py --examples 200 --sim-devices 4 --runner-per-phone  # the old layout
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.report import write_report
from devices.suite.scoring import score_final_state
from schemas.registry import validate_event
from schemas.tasks import TaskProposed
from schemas.topics import TOPICS
from services.cli.loop_run import SERVICES, DataLoop
from services.dataflow.agent import store_path
from services.dataflow.tasks import instance_of, new_harness, oracle_actions
from services.device_runner.fleet import SimFleet
from services.rollout.service import stats_path
from streams.admin import create_topics
from streams.broker import LocalBroker

__all__ = ["main"]

logger = logging.getLogger(__name__)
console = Console(width=140)

DEFAULT_EXAMPLES = 500
DEFAULT_REPS = 3
#: Guards against a stuck loop only.
TIMEOUT_S = 600.0
#: The issue's aims: `flywheel run --examples 500` within 3 minutes; the loop at least half
#: the in-process rate.
AIM_WALL_S = 180.0
AIM_RATIO = 0.5
#: Through the device runners (every step an event over the topics).
AIM_RUNNERS_RATIO = 0.3


def run_loop(examples: int, folder: Path, sim_devices: int = 0, runner_per_phone: bool = False
             ) -> dict[str, float]:
    """One timed loop to `examples` rows; with `sim_devices`, the rollout plays through that
    many sim phones served by a runner thread of this process, as in `flywheel run` (or one
    runner thread per phone)."""
    with LocalBroker.on_free_port(folder / "broker") as broker, \
            SimFleet(sim_devices, broker.bootstrap, runner_per_phone=runner_per_phone) as fleet:
        create_topics(broker.bootstrap, TOPICS.values())
        began = time.monotonic()
        devices = ",".join(fleet.device_ids)
        loop = DataLoop(broker.bootstrap, folder / "var", examples,
                        env={"FLYWHEEL_ROLLOUT_DEVICES": devices})
        with loop:
            while not loop.done:
                if time.monotonic() - began > TIMEOUT_S or loop.dead():
                    raise RuntimeError(f"the loop did not finish: {loop.status()} "
                                       f"(logs in {loop.log_dir})")
                time.sleep(0.05)
            done = time.monotonic()
            cpu = {name: _cpu_s(loop.pid(name)) for name in SERVICES}
        p = loop.progress
        snapshot = p.snapshots[0]
    rollout = json.loads(stats_path(folder / "var").read_text())
    steady = done - (p.first_episode_at or began)
    return {"wall_s": done - began, "startup_s": (p.first_episode_at or began) - began,
            "episodes": p.episodes, "rows": snapshot.rows,
            "episodes_per_s": p.episodes / steady, "examples_per_s": snapshot.rows / steady,
            "sim_utilisation": rollout["sim_utilisation"],
            **{f"cpu_s_{name}": seconds for name, seconds in cpu.items()},
            "tasks_db": str(store_path(folder / "var", "generator"))}


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def read_tasks(db: str) -> list[TaskProposed]:
    rows = sqlite3.connect(db).execute(
        "SELECT payload FROM events WHERE topic = 'flywheel.tasks' ORDER BY seq").fetchall()
    return [validate_event(json.loads(payload)) for (payload,) in rows]  # type: ignore[misc]


def run_in_process(tasks: list[TaskProposed]) -> float:
    """Episodes/s of the same tasks in process: the oracle through the harness on one SimPhone,
    the final state through JSON, scored (what `flywheel suite eval` does per task)."""
    harness = new_harness()
    began = time.perf_counter()
    for proposed in tasks:
        task = instance_of(proposed)
        oracle_actions(task, harness)
        score_final_state(task, json.loads(json.dumps(harness.final_state())))
    return len(tasks) / (time.perf_counter() - began)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES)
    parser.add_argument("--reps", type=int, default=DEFAULT_REPS)
    parser.add_argument("--sim-devices", type=int, default=0,
                        help="play through this many sim phones of a device runner (flywheel "
                             "run's default path; aim 0.3); 0: in-process phones (aim 0.5)")
    parser.add_argument("--runner-per-phone", action="store_true",
                        help="with --sim-devices: one runner thread per phone (the old layout) "
                             "instead of one runner serving them all")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    aim = AIM_RATIO if not args.sim_devices else AIM_RUNNERS_RATIO
    aim_name = ("loop / in-process episodes/s" if not args.sim_devices
                else f"loop through {args.sim_devices} sim phones / in-process episodes/s")
    runs: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-loop-") as tmp:
        for rep in range(args.reps):
            folder = Path(tmp) / f"rep-{rep}"
            figures = run_loop(args.examples, folder, args.sim_devices, args.runner_per_phone)
            tasks = read_tasks(str(figures.pop("tasks_db")))
            figures["in_process_episodes_per_s"] = run_in_process(tasks)
            figures["ratio"] = figures["episodes_per_s"] / figures["in_process_episodes_per_s"]
            runs.append(figures)
            console.print(f"run {rep + 1}/{args.reps}: {figures['wall_s']:.1f} s wall, "
                          f"{figures['episodes']:.0f} episodes, {figures['rows']:.0f} rows, "
                          f"{figures['episodes_per_s']:.1f} episodes/s, "
                          f"{figures['examples_per_s']:.1f} examples/s, in process "
                          f"{figures['in_process_episodes_per_s']:,.0f} episodes/s")
    table = Table("figure", "median", "runs", title=f"data flywheel, {args.examples} examples, "
                                                    "oracle policy")
    for key in ("wall_s", "startup_s", "episodes", "rows", "episodes_per_s", "examples_per_s",
                "in_process_episodes_per_s", "ratio", "sim_utilisation",
                *(f"cpu_s_{name}" for name in SERVICES)):
        values = [r[key] for r in runs]
        table.add_row(key, f"{statistics.median(values):,.3f}",
                      ", ".join(f"{v:,.3f}" for v in values))
    console.print(table)
    wall = statistics.median(r["wall_s"] for r in runs)
    ratio = statistics.median(r["ratio"] for r in runs)
    console.print(f"wall {wall:.1f} s (aim <= {AIM_WALL_S:.0f} s for 500 examples); {aim_name} = "
                  f"{ratio:.3f} (aim >= {aim})")
    if args.json is not None:
        keys = [k for k in runs[0] if isinstance(runs[0][k], int | float)]
        write_report(args.json, "loop", {k: [r[k] for r in runs] for k in keys},
                     {aim_name: (ratio, aim)},
                     examples=args.examples, reps=args.reps, sim_devices=args.sim_devices,
                     runner_per_phone=args.runner_per_phone)
    return 0


if __name__ == "__main__":
    sys.exit(main())
