"""Evaluation on a CPU against what its forward passes cost alone: where an episode's time goes.

    .venv/bin/python bench/eval_profile.py --model var/models/smollm2-135m --tasks 8 --reps 3 [--json out.json]

Plays `--tasks` easy dev tasks with the evaluation's own path (`trainer.evaluate.evaluate_policy`:
one episode at a time with the prompt cache and lookup drafts, the CPU default; or, with
`--batch-size N`, N episodes at once in left-padded batches, the GPU path) and records every
forward pass the model makes: its rows, how many new tokens each row feeds, how many the cache
already holds, and how long it took. Then a micro-benchmark times lone forward passes of those
shapes on a grid (a cache of random tokens, the pass repeated on it, medians) and predicts the
evaluation as the sum of its passes' grid costs (interpolated). The aim is the prediction over the measured wall time, at
least 1 / 1.3: the evaluation within 1.3× of what its passes cost alone. The table splits the
rest into the passes running slower in place than alone and the time outside passes (the
harness and simulator, rendering and tokenising prompts, Python between passes). Medians over
--reps; each repetition plays the same tasks on a fresh policy.
"""

from __future__ import annotations

import argparse
import bisect
import statistics
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console
from rich.table import Table

__all__ = ["main"]

console = Console(width=140)

#: Within this factor of the passes' own cost (the issue's aim).
AIM_FACTOR = 1.3
#: The micro-benchmark's grid: new tokens per pass, and tokens already in the cache.
NEW_GRID = (1, 2, 4, 8, 12, 16, 32, 64, 128, 256, 512, 1024, 2048)
HELD_GRID = (0, 256, 512, 1024, 2048, 3072)
#: Timed repetitions of each grid pass (after one untimed warm-up).
GRID_REPS = 5


Pass = tuple[int, int, int, float]  # rows, new tokens per row, cached tokens per row, seconds


class PassRecorder:
    """Wraps a model's `forward`: every pass's rows, new and cached tokens per row, and seconds."""

    def __init__(self, model: Any) -> None:
        self.passes: list[Pass] = []
        original = model.forward

        def timed(*args: Any, **kwargs: Any) -> Any:
            ids = kwargs["input_ids"] if "input_ids" in kwargs else args[0]
            cache = kwargs.get("past_key_values")
            held = cache.get_seq_length() if cache is not None else 0
            began = time.perf_counter()
            out = original(*args, **kwargs)
            self.passes.append((int(ids.shape[0]), int(ids.shape[1]), int(held), time.perf_counter() - began))
            return out

        model.forward = timed


def play(model_dir: str, tasks: list[Any], dtype: str, max_new_tokens: int,
         batch_size: int) -> tuple[float, list[Pass]]:
    """Wall seconds of one evaluation of `tasks`, and its forward passes."""
    from trainer.evaluate import evaluate_policy
    from trainer.policy import load_policy

    policy = load_policy(model_dir, dtype=dtype, max_new_tokens=max_new_tokens)
    recorder = PassRecorder(policy.model)
    began = time.perf_counter()
    evaluate_policy(policy, tasks, split="dev", progress=False, batch_size=batch_size)
    return time.perf_counter() - began, recorder.passes


def grid_costs(model_dir: str, dtype: str, needed: list[tuple[int, int, int]]) -> dict[tuple[int, int, int], float]:
    """Median seconds of a lone forward pass of `rows` rows of `new` tokens on a cache of `held`
    per row, for every grid point the recorded passes fall between."""
    import torch
    from transformers import DynamicCache

    from trainer.policy import load_policy

    model = load_policy(model_dir, dtype=dtype).model
    vocab = int(model.config.vocab_size)
    points = sorted({(rows, *p) for rows, new, held in needed for p in _corners(new, held)})
    costs: dict[tuple[int, int, int], float] = {}
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for rows, new, held in points:
            cache = DynamicCache(config=model.config)
            if held:
                model(input_ids=torch.randint(vocab, (rows, held), generator=generator), past_key_values=cache,
                      use_cache=True, logits_to_keep=1)
            ids = torch.randint(vocab, (rows, new), generator=generator)
            times = []
            for rep in range(GRID_REPS + 1):
                began = time.perf_counter()
                model(input_ids=ids, past_key_values=cache, use_cache=True, logits_to_keep=new)
                if rep:
                    times.append(time.perf_counter() - began)
                cache.crop(-new)  # back to the `held` tokens for the next repetition
            costs[(rows, new, held)] = statistics.median(times)
    return costs


def _bracket(grid: tuple[int, ...], value: int) -> tuple[int, int]:
    """The grid points around `value` (both the last one beyond the grid)."""
    i = bisect.bisect_left(grid, value)
    if i < len(grid) and grid[i] == value:
        return grid[i], grid[i]
    if i == 0:
        return grid[0], grid[0]
    if i == len(grid):
        return grid[-1], grid[-1]
    return grid[i - 1], grid[i]


def _corners(new: int, held: int) -> list[tuple[int, int]]:
    n0, n1 = _bracket(NEW_GRID, new)
    h0, h1 = _bracket(HELD_GRID, held)
    return [(n0, h0), (n1, h0), (n0, h1), (n1, h1)]


def predicted(costs: dict[tuple[int, int, int], float], rows: int, new: int, held: int) -> float:
    """A pass's cost from the grid (its own row count): linear in new tokens and in held tokens
    between grid points, scaled linearly beyond the largest new-token point."""
    n0, n1 = _bracket(NEW_GRID, new)
    h0, h1 = _bracket(HELD_GRID, held)

    def along_new(h: int) -> float:
        if n0 == n1:
            return costs[(rows, n0, h)] * (new / n0 if new > n0 else 1.0)
        return costs[(rows, n0, h)] + (costs[(rows, n1, h)] - costs[(rows, n0, h)]) * (new - n0) / (n1 - n0)

    if h0 == h1:
        return along_new(h0)
    return along_new(h0) + (along_new(h1) - along_new(h0)) * (held - h0) / (h1 - h0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="var/models/smollm2-135m")
    parser.add_argument("--tasks", type=int, default=8, help="easy dev tasks (one instance per template)")
    parser.add_argument("--max-steps", type=int, default=6)
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    parser.add_argument("--batch-size", type=int, default=1,
                        help="episodes decoded together (1: one at a time, the CPU default)")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)

    from bench.report import aim_lines, write_report
    from devices.suite.instances import generate_split
    from devices.suite.registry import get_template

    tasks = [t.model_copy(update={"max_steps": min(t.max_steps, args.max_steps)})
             for t in generate_split("dev", 1, 0) if get_template(t.template).tier == "easy"][:args.tasks]
    runs: dict[str, list[float]] = {}
    recorded: list[list[Pass]] = []
    for rep in range(1, args.reps + 1):
        wall, passes = play(args.model, tasks, args.dtype, args.max_new_tokens, args.batch_size)
        recorded.append(passes)
        runs.setdefault("wall_s", []).append(wall)
        runs.setdefault("forward_s", []).append(sum(p[-1] for p in passes))
        runs.setdefault("passes", []).append(float(len(passes)))
        console.print(f"rep {rep}/{args.reps}: {wall:.1f} s, {len(passes)} forward passes "
                      f"({sum(p[-1] for p in passes):.1f} s in them)", highlight=False)
    began = time.perf_counter()
    shapes = sorted({(rows, new, held) for passes in recorded for rows, new, held, _ in passes})
    costs = grid_costs(args.model, args.dtype, shapes)
    console.print(f"micro-benchmark: {len(costs)} grid passes in {time.perf_counter() - began:.0f} s",
                  highlight=False)
    for passes in recorded:
        runs.setdefault("predicted_s", []).append(sum(predicted(costs, rows, new, held)
                                                      for rows, new, held, _ in passes))
    for i in range(args.reps):
        runs.setdefault("predicted / wall", []).append(runs["predicted_s"][i] / runs["wall_s"][i])
        runs.setdefault("forward / predicted", []).append(runs["forward_s"][i] / runs["predicted_s"][i])
        runs.setdefault("outside passes share", []).append(1 - runs["forward_s"][i] / runs["wall_s"][i])
    table = Table("figure", "median", "runs", title=f"{Path(args.model).name}, {args.dtype}, {len(tasks)} easy dev "
                                                    f"tasks ≤ {args.max_steps} steps, "
                                                    + (f"batches of {args.batch_size}" if args.batch_size > 1
                                                       else "one at a time"))
    for key, values in runs.items():
        table.add_row(key, f"{statistics.median(values):,.3f}", ", ".join(f"{v:,.3f}" for v in values))
    console.print(table)
    aims = {"micro-benchmark prediction / measured": (statistics.median(runs["predicted / wall"]), 1 / AIM_FACTOR)}
    for line in aim_lines(aims):
        console.print(line, highlight=False)
    if args.json:
        write_report(args.json, "eval_profile", runs, aims, model=str(args.model), dtype=args.dtype,
                     tasks=len(tasks), max_steps=args.max_steps, batch_size=args.batch_size,
                     grid={f"{rows}x{new}+{held}": s for (rows, new, held), s in sorted(costs.items())})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
