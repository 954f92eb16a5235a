"""Episode decoding on a CPU: one episode at a time with the prompt cache, against the two other ways.

    python bench/prefix_cache.py --model var/bench/cpu/sft --tasks 6 --reps 3 --dtype bfloat16

The same seeded dev tasks (≤ `--max-steps` steps each) are played three ways, `--reps` times each:
one at a time with `ModelPolicy(prefix_cache=True)` (each step prefills only the tokens after the
previous step's), one at a time without it (the baseline: every step prefills its whole prompt),
and all at once through trainer.batched (left-padded batches, the GPU path). Each figure is the
median seconds per episode step; ratios are against the baseline measured in the same run. Also
printed: whether the cached run's answers equal the baseline's token for token (in bf16 the
chunked prefill can round differently, so an answer may differ; in fp32 they match).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console
from rich.table import Table

__all__ = ["main"]

console = Console()


def _play(model: str, tasks: list, dtype: str, prefix_cache: bool, batch_size: int,
          max_new_tokens: int) -> tuple[float, list[int]]:
    """Seconds per episode step of one evaluation, and every answer's token count."""
    from trainer.evaluate import evaluate_policy
    from trainer.policy import load_policy

    policy = load_policy(model, dtype=dtype, max_new_tokens=max_new_tokens, prefix_cache=prefix_cache)
    started = time.perf_counter()
    evaluate_policy(policy, tasks, progress=False, batch_size=batch_size)
    return (time.perf_counter() - started) / max(policy.stats.steps, 1), list(policy.stats.output_tokens)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="var/models/smollm2-135m", help="a model or checkpoint directory")
    parser.add_argument("--tasks", type=int, default=6, help="dev tasks (seeded, one instance per template)")
    parser.add_argument("--max-steps", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=144)
    parser.add_argument("--batch-size", type=int, default=8, help="episodes per batch on the batched path")
    parser.add_argument("--dtype", default="bfloat16", choices=["float32", "bfloat16"])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args(argv)

    from devices.suite.instances import generate_split

    tasks = [t.model_copy(update={"max_steps": min(t.max_steps, args.max_steps)})
             for t in generate_split("dev", 1, 0)[:args.tasks]]
    ways = {"one at a time, no cache (baseline)": (False, 1), "one at a time, prompt cache": (True, 1),
            f"batched ×{args.batch_size}, padded": (False, args.batch_size)}
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    answers: dict[str, list[int]] = {}
    for rep in range(1, args.reps + 1):
        for name, (cached, batch) in ways.items():  # interleaved, so drift hits every way alike
            per_step, tokens = _play(args.model, tasks, args.dtype, cached, batch, args.max_new_tokens)
            seconds[name].append(per_step)
            answers.setdefault(name, tokens)
            console.print(f"rep {rep}/{args.reps} {name}: {per_step:.2f} s per step", highlight=False)
    baseline = statistics.median(seconds[next(iter(ways))])
    table = Table(title=f"{Path(args.model).name}, {args.dtype}, {len(tasks)} dev tasks ≤ {args.max_steps} steps "
                        f"(median of {args.reps})")
    for column in ("way", "s per episode step", "speed vs baseline"):
        table.add_column(column)
    for name, values in seconds.items():
        median = statistics.median(values)
        table.add_row(name, f"{median:.2f}", f"{baseline / median:.2f}×")
    console.print(table)
    same = answers["one at a time, prompt cache"] == answers[next(iter(ways))]
    console.print(f"cached answers equal the baseline's token counts: {same}", highlight=False)


if __name__ == "__main__":
    main()
