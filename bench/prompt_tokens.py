"""Prompt bench: tokens per step of the policy's prompt on the suite's oracle steps, per family and tier.

Run (a minute on 2 CPU cores):

    python bench/prompt_tokens.py --model var/models/smollm2-135m --split dev --n 1 [--json out.json]

Plays the oracle through the harness on every template of the split and renders, before every
step, the exact prompt a `ModelPolicy` would decode from (the one context renderer, the chat
template), then counts its tokens with the model's tokenizer. Prints the median and p90 per family
and tier and overall, and the answer tokens beside them (the part a model is trained to write).
`new/step` is the median of what each step adds to the previous step's prompt and answer — what a
packed SFT sequence and the policy's prefix cache actually compute per step — and `episode` the
median tokens of a whole episode (one packed SFT sequence). `unpacked` is the median over episodes
of every step's prompt and answer added up: what training computes when each step is its own row,
as it must be when a step's prompt is not the previous prompt extended (a window of the last
steps, a summary of older ones) — the price of a shorter per-step prompt.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

__all__ = ["main", "measure"]


def _quantile(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))]) if ordered else 0.0


def measure(tokenizer: Any, split: str, n: int, seed: int) -> dict[str, Any]:
    """Prompt and answer tokens of every oracle step, grouped by family, tier and both."""
    from devices.harness import Harness
    from devices.harness.answer import format_action
    from devices.harness.episode import Alongside, play
    from devices.sim import SimPhone
    from devices.suite.instances import generate_split
    from devices.suite.policies import OraclePolicy
    from devices.suite.registry import get_template
    from trainer.policy import ModelPolicy

    policy = ModelPolicy(None, tokenizer, prefix_cache=False)
    harness = Harness(SimPhone())
    groups: dict[str, list[int]] = defaultdict(list)
    new_tokens: dict[str, list[int]] = defaultdict(list)
    episode_tokens: dict[str, list[int]] = defaultdict(list)
    unpacked_tokens: dict[str, list[int]] = defaultdict(list)
    answers: list[int] = []

    def counter(task: Any, seen: list[int]) -> Any:
        """Counts each step's prompt, and the tokens it adds to the previous step's prompt and
        answer (what packing and a prefix cache compute); `seen` ends as the episode's length
        and the sum of its steps' prompts and answers."""
        tier = get_template(task.template).tier or "unknown"

        def on_step(_index: int, observation: Any, action: Any) -> None:
            ids = policy.prompt_ids(policy.prompt_messages(observation))
            answer = len(tokenizer(format_action(action), add_special_tokens=False)["input_ids"])
            policy.accept(format_action(action))
            for key in ("all", task.family, f"tier/{tier}", f"{task.family}/{tier}"):
                groups[key].append(len(ids))
                new_tokens[key].append(len(ids) - seen[0])
            seen[0] = len(ids) + answer
            seen[1] += len(ids) + answer
            answers.append(answer)
        return on_step

    for task in generate_split(split, n, seed):  # type: ignore[arg-type]
        oracle = OraclePolicy()
        oracle.prepare(task)
        seen = [0, 0]
        play(harness, task, Alongside(oracle, policy), on_step=counter(task, seen))
        tier = get_template(task.template).tier or "unknown"
        for key in ("all", task.family, f"tier/{tier}", f"{task.family}/{tier}"):
            episode_tokens[key].append(seen[0])
            unpacked_tokens[key].append(seen[1])
    harness.close()
    table = {key: {"steps": len(v), "median": statistics.median(v), "p90": _quantile(v, 0.9),
                   "max": max(v), "new_median": statistics.median(new_tokens[key]),
                   "episode_median": statistics.median(episode_tokens[key]),
                   "unpacked_median": statistics.median(unpacked_tokens[key])} for key, v in sorted(groups.items())}
    return {"split": split, "n": n, "seed": seed, "prompt_tokens": table,
            "answer_tokens_median": statistics.median(answers) if answers else 0.0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="var/models/smollm2-135m", help="A local model dir (its tokenizer counts).")
    parser.add_argument("--split", default="dev", choices=["train", "dev", "test"])
    parser.add_argument("--n", type=int, default=1, help="Instances per template.")
    parser.add_argument("--seed", type=int, default=0, help="The suite seed.")
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures here.")
    args = parser.parse_args(argv)
    from rich.console import Console
    from rich.table import Table

    from trainer.models import load_tokenizer

    result = measure(load_tokenizer(args.model), args.split, args.n, args.seed)
    table = Table(title=f"prompt tokens per step ({args.split}, n={args.n}, seed {args.seed})")
    for column in ("slice", "steps", "median", "p90", "max", "new/step", "episode", "unpacked"):
        table.add_column(column, justify="left" if column == "slice" else "right")
    for key, row in result["prompt_tokens"].items():
        table.add_row(key, str(row["steps"]), f"{row['median']:.0f}", f"{row['p90']:.0f}", str(row["max"]),
                      f"{row['new_median']:.0f}", f"{row['episode_median']:.0f}",
                      f"{row['unpacked_median']:.0f}")
    Console().print(table)
    Console().print(f"answer tokens per step, median: {result['answer_tokens_median']:.0f}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
