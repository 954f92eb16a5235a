"""Benchmark of the services' folds as a run grows: the cost of one more episode must not grow.

    .venv/bin/python bench/fold.py                   # 3,000 episodes in 6 blocks, 3 repetitions
    .venv/bin/python bench/fold.py --episodes 600 --blocks 3 --reps 1 --json fold.json

Real oracle episodes of train tasks (played and verified in process, once) are folded the way
the services fold them, event by event, into a fresh state: the curator (`handle` + `apply`,
its review requests and automatic decisions fed back in), the verifier's `evolve` and the
generator's `evolve`. CPU time per episode is taken per block of the run; the aim compares the
last block with the first, measured in the same repetition: a state that copies its maps on
every event costs O(n) per episode (O(n²) per run and per restart's replay) and the ratio
first ÷ last falls with the run's length; a persistent state keeps it near 1. Medians over
--reps.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.report import aim_lines, write_report

__all__ = ["main"]

console = Console(width=140)

#: A persistent state's last block may cost this much more than its first (caches, a longer
#: near-duplicate list per template) and no more: first ÷ last ≥ 0.67.
AIM_FLAT = 0.67


def play_episodes(n: int, folder: Path) -> list[list[tuple[str, Any]]]:
    """`n` train tasks, each with its rollout's events and its verdict (and failure trace), as
    (topic, event) in the order the curator would read them."""
    from devices.blobs import BlobStore
    from devices.sim import SimPhone
    from devices.suite.registry import templates_for
    from services.dataflow.ids import derived_id
    from services.dataflow.tasks import new_harness, task_event
    from services.rollout.engine import Rollout
    from services.rollout.policies import load_policy
    from services.verifier.decide import VerifierState, World
    from services.verifier.decide import decide as verify
    from services.verifier.decide import evolve as verifier_evolve

    blobs = BlobStore(folder / "blobs")
    rollout = Rollout(SimPhone("bench-fold"), load_policy("oracle"), "oracle", blobs)
    world = World(blobs, new_harness("bench-fold-verifier"))
    verifier = VerifierState()
    templates = templates_for("train")
    played = []
    for i in range(n):
        task = templates[i % len(templates)].generate("train", i // len(templates), 0)
        proposed = task_event(task, tier="easy", event_id=derived_id("bench-fold", task.task_id),
                              source="bench/fold", correlation_id=task.task_id)
        verifier = verifier_evolve(verifier, proposed)
        started, ended = rollout.run(proposed)
        verdicts = [("flywheel.verdicts" if e.type == "verdict.issued" else "flywheel.failures", e)
                    for e in verify(verifier, ended, world)]
        played.append([("flywheel.tasks", proposed), ("flywheel.episodes", started),
                       ("flywheel.episodes", ended), *verdicts])
    rollout.close()
    return played


def fold_blocks(played: list[list[tuple[str, Any]]], blocks: int, folder: Path) -> dict[str, list[float]]:
    """CPU ms per episode of each block, per service, folding into fresh states."""
    from services.curator.service import CuratorService
    from services.dataflow.store import Stored
    from services.generator.construct import build_catalogue
    from services.generator.decide import evolve as generator_evolve
    from services.generator.decide import initial_state
    from services.verifier.decide import VerifierState
    from services.verifier.decide import evolve as verifier_evolve

    curator = CuratorService(folder / "snapshots", folder / "blobs", snapshot_examples=10**9)
    curator.warm_up()  # one-time costs (imports, compiled patterns) out of block 1
    verifier = VerifierState()
    generator = initial_state(build_catalogue())
    offsets: dict[str, int] = {}

    def deliver(topic: str, event: Any) -> None:
        offsets[topic] = offsets.get(topic, -1) + 1
        stored = Stored(event, topic, 0, offsets[topic])
        queued = [(t.name, e) for t, e in curator.handle(stored)]
        curator.apply(stored)
        for name, out in queued:
            deliver(name, out)


    size = max(1, len(played) // blocks)
    costs: dict[str, list[float]] = {"curator": [], "verifier": [], "generator": []}
    for start in range(0, size * blocks, size):
        chunk = played[start:start + size]
        began = time.process_time()
        for events in chunk:
            for topic, event in events:
                deliver(topic, event)
        costs["curator"].append((time.process_time() - began) / len(chunk) * 1e3)
        began = time.process_time()
        for events in chunk:
            for _, event in events:
                verifier = verifier_evolve(verifier, event)
        costs["verifier"].append((time.process_time() - began) / len(chunk) * 1e3)
        began = time.process_time()
        for events in chunk:
            for _, event in events:
                generator = generator_evolve(generator, event)
        costs["generator"].append((time.process_time() - began) / len(chunk) * 1e3)
    return costs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3000)
    parser.add_argument("--blocks", type=int, default=6)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if args.blocks < 2 or args.episodes < args.blocks:
        parser.error("--blocks must be at least 2 and --episodes at least --blocks")
    with tempfile.TemporaryDirectory(prefix="bench-fold-") as tmp:
        began = time.monotonic()
        played = play_episodes(args.episodes, Path(tmp))
        console.print(f"played and verified {len(played):,} episodes in "
                      f"{time.monotonic() - began:.1f} s")
        runs: dict[str, list[float]] = {}
        for rep in range(args.reps):
            costs = fold_blocks(played, args.blocks, Path(tmp) / f"rep-{rep}")
            for name, per_block in costs.items():
                runs.setdefault(f"{name} first block ms/episode", []).append(per_block[0])
                runs.setdefault(f"{name} last block ms/episode", []).append(per_block[-1])
                runs.setdefault(f"{name} first / last", []).append(per_block[0] / per_block[-1])
            console.print(f"run {rep + 1}/{args.reps}: curator ms/episode per block "
                          + ", ".join(f"{c:.2f}" for c in costs["curator"]))
    table = Table("figure", "median", "runs", title=f"folding {args.episodes:,} episodes "
                                                    f"({args.blocks} blocks)")
    for key, values in runs.items():
        table.add_row(key, f"{statistics.median(values):.3f}", ", ".join(f"{v:.3f}" for v in values))
    console.print(table)
    aims = {f"{name} first / last block": (statistics.median(runs[f"{name} first / last"]), AIM_FLAT)
            for name in ("curator", "verifier", "generator")}
    for line in aim_lines(aims):
        console.print(line)
    if args.json is not None:
        write_report(args.json, "fold", runs, aims, episodes=args.episodes, blocks=args.blocks,
                     reps=args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
