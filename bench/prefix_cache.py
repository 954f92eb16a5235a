"""Episode decoding on a CPU: one episode at a time with the prompt cache and lookup drafts, against the other ways.

    python bench/prefix_cache.py --model var/bench/cpu/sft --tasks 6 --reps 3 --dtype bfloat16 [--json out.json]

The same seeded dev tasks (≤ `--max-steps` steps each) are played up to four ways, `--reps` times
each, interleaved: one at a time without the prompt cache (the baseline: every step prefills its
whole prompt and decodes token by token), one at a time with `ModelPolicy(prefix_cache=True)`
(each step prefills only the tokens after the previous step's), the same plus lookup drafts
(`lookup=True`, trainer.lookup_decoding: a draft copied from the prompt is checked in one pass),
and all at once through trainer.batched (left-padded batches, the GPU path; `--batch-size 0`
skips it). Each figure is the median seconds per episode step; ratios are against the baseline
measured in the same run. Also printed: output tokens and forward passes per answer, and whether
each way's answers equal the baseline's text for text (in bf16 a chunk of positions can round
differently from one at a time, so an answer may differ; in fp32 they match).
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
BASELINE = "one at a time, no cache (baseline)"
LOOKUP = "one at a time, prompt cache + lookup drafts"


def _play(model: str, tasks: list, dtype: str, prefix_cache: bool, lookup: bool, batch_size: int,
          max_new_tokens: int) -> tuple[float, list[str], int, int]:
    """Seconds per episode step of one evaluation, every answer's text, output tokens and forward passes."""
    from trainer.evaluate import evaluate_policy
    from trainer.policy import load_policy

    policy = load_policy(model, dtype=dtype, max_new_tokens=max_new_tokens, prefix_cache=prefix_cache,
                         lookup=lookup)
    texts: list[str] = []
    accept = policy.accept
    policy.accept = lambda text: (texts.append(text), accept(text))[1]  # type: ignore[method-assign]
    passes = [0]
    policy.model.register_forward_pre_hook(lambda *_: passes.__setitem__(0, passes[0] + 1))
    started = time.perf_counter()
    evaluate_policy(policy, tasks, progress=False, batch_size=batch_size)
    seconds = (time.perf_counter() - started) / max(policy.stats.steps, 1)
    return seconds, texts, sum(policy.stats.output_tokens), passes[0]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="var/models/smollm2-135m", help="a model or checkpoint directory")
    parser.add_argument("--tasks", type=int, default=6, help="dev tasks (seeded, one instance per template)")
    parser.add_argument("--tier", default=None, help="only templates of this tier (easy, medium, hard)")
    parser.add_argument("--max-steps", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=144)
    parser.add_argument("--batch-size", type=int, default=8, help="episodes per batch on the batched path (0: skip it)")
    parser.add_argument("--dtype", default="bfloat16", choices=["float32", "bfloat16"])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)

    from bench.report import write_report
    from devices.suite.instances import generate_split
    from devices.suite.registry import get_template

    tasks = [t.model_copy(update={"max_steps": min(t.max_steps, args.max_steps)})
             for t in generate_split("dev", 1, 0) if args.tier in (None, get_template(t.template).tier)][:args.tasks]
    ways = {BASELINE: (False, False, 1), "one at a time, prompt cache": (True, False, 1),
            LOOKUP: (True, True, 1)}
    if args.batch_size > 1:
        ways[f"batched ×{args.batch_size}, padded"] = (False, False, args.batch_size)
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    answers: dict[str, list[str]] = {}
    counts: dict[str, tuple[int, int]] = {}
    for rep in range(1, args.reps + 1):
        for name, (cached, lookup, batch) in ways.items():  # interleaved, so drift hits every way alike
            per_step, texts, tokens, passes = _play(args.model, tasks, args.dtype, cached, lookup, batch,
                                                    args.max_new_tokens)
            seconds[name].append(per_step)
            answers.setdefault(name, texts)
            counts.setdefault(name, (tokens, passes))
            console.print(f"rep {rep}/{args.reps} {name}: {per_step:.2f} s per step", highlight=False)
    baseline = statistics.median(seconds[BASELINE])
    table = Table(title=f"{Path(args.model).name}, {args.dtype}, {len(tasks)} dev tasks ≤ {args.max_steps} steps "
                        f"(median of {args.reps})")
    for column in ("way", "s per episode step", "speed vs baseline", "output tokens", "forward passes",
                   "answers = baseline's"):
        table.add_column(column)
    same = {name: sum(a == b for a, b in zip(texts, answers[BASELINE], strict=False)) for name, texts in answers.items()}
    for name, values in seconds.items():
        median = statistics.median(values)
        table.add_row(name, f"{median:.2f}", f"{baseline / median:.2f}×", str(counts[name][0]), str(counts[name][1]),
                      f"{same[name]}/{len(answers[BASELINE])}")
    console.print(table)
    if args.json:
        write_report(args.json, "prefix_cache", seconds,
                     {"lookup vs baseline": (baseline / statistics.median(seconds[LOOKUP]), 1.0)},
                     model=str(args.model), dtype=args.dtype, tasks=len(tasks), tier=args.tier,
                     output_tokens={k: v[0] for k, v in counts.items()},
                     forward_passes={k: v[1] for k, v in counts.items()},
                     answers_equal_baseline={k: f"{v}/{len(answers[BASELINE])}" for k, v in same.items()})


if __name__ == "__main__":
    main()
