"""Learning bench: a base model → SFT → GRPO+CARE, scored on dev and test (held-out templates) with intervals.

Run (minutes to hours on 2 CPU cores; SmolLM2-135M by default):

    python bench/learn.py --model var/models/smollm2-135m --stages zero,sft,rl --n 1 --out var/bench/learn

Each stage writes `<out>/<stage>-<split>.json` (overall, per family and tier, success, tokens,
tool calls, validity, prompt tokens, 95% bootstrap intervals) and prints a summary table.
`--stages zero` alone measures the base model zero-shot (and with `--constrained` with
lm-format-enforcer's JSON constraint).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console
from rich.table import Table

__all__ = ["main"]

logger = logging.getLogger(__name__)
console = Console()


def _tasks(split: str, n: int, seed: int, max_steps: int, limit: int | None) -> list:
    from devices.suite.instances import generate_split

    tasks = [t.model_copy(update={"max_steps": min(t.max_steps, max_steps)})
             for t in generate_split(split, n, seed)]
    return tasks[:limit] if limit else tasks


def evaluate_dir(model: Path, split: str, args: argparse.Namespace, label: str, *, constrained: bool = False) -> dict:
    from trainer.evaluate import evaluate_policy
    from trainer.policy import load_policy

    policy = load_policy(model, constrained=constrained, max_new_tokens=args.max_new_tokens)
    started = time.monotonic()
    summary = evaluate_policy(policy, _tasks(split, args.n, args.seed, args.max_steps, args.limit), split=split)
    data = summary.to_json_dict() | {"label": label, "model": str(model), "constrained": constrained,
                                     "seconds": round(time.monotonic() - started, 1),
                                     "steps": policy.stats.steps, "invalid": policy.stats.invalid,
                                     "invalid_reasons": policy.stats.invalid_reasons}
    out = Path(args.out) / f"{label}-{split}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=2))
    return data


def _row(table: Table, data: dict) -> None:
    lo, hi = data["overall_ci"]
    table.add_row(data["label"], data["split"], str(data["episodes"]), f"{data['overall']:.3f} [{lo:.3f}, {hi:.3f}]",
                  f"{data['success']:.3f}", f"{data['validity']:.2f}", f"{data['median_prompt_tokens']:.0f}",
                  f"{data['mean_output_tokens']:.1f}", f"{data['mean_tool_calls']:.2f}", f"{data['seconds']:.0f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="var/models/smollm2-135m")
    parser.add_argument("--stages", default="zero,sft,rl", help="comma list of zero, sft, rl")
    parser.add_argument("--splits", default="dev,test")
    parser.add_argument("--n", type=int, default=1, help="instances per template")
    parser.add_argument("--limit", type=int, default=None, help="at most this many tasks per split")
    parser.add_argument("--max-steps", type=int, default=8, help="steps per episode")
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--sft-n", type=int, default=3, help="train instances per template for SFT")
    parser.add_argument("--sft-epochs", type=float, default=1.0)
    parser.add_argument("--sft-max-steps", type=int, default=-1, help="cap on SFT steps (-1: epochs)")
    parser.add_argument("--sft-batch", type=int, default=2)
    parser.add_argument("--sft-max-length", type=int, default=1024, help="tokens per SFT example (memory)")
    parser.add_argument("--sft-method", default="full", choices=["full", "lora"])
    parser.add_argument("--rl-steps", type=int, default=10)
    parser.add_argument("--rl-group", type=int, default=8, help="G: rollouts per task")
    parser.add_argument("--rl-max-completion", type=int, default=256)
    parser.add_argument("--rl-tool-calls", type=int, default=6)
    parser.add_argument("--constrained", action="store_true", help="also evaluate with constrained decoding")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (share the machine)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="var/bench/learn")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger("trainer").setLevel(logging.INFO)
    import torch

    torch.set_num_threads(args.threads)
    stages = args.stages.split(",")
    splits = args.splits.split(",")
    out = Path(args.out)
    results = []
    model = Path(args.model)
    if "zero" in stages:
        for split in splits:
            results.append(evaluate_dir(model, split, args, "zero"))
            if args.constrained:
                results.append(evaluate_dir(model, split, args, "zero-constrained", constrained=True))
    if "sft" in stages:
        from trainer.data import build_oracle_snapshot
        from trainer.sft import SftConfig, run_sft

        snapshot = build_oracle_snapshot(out / "snapshot", n_per_template=args.sft_n, suite_seed=args.seed)
        result = run_sft(model, snapshot, out / "sft", SftConfig(
            method=args.sft_method, epochs=args.sft_epochs, max_steps=args.sft_max_steps, batch_size=args.sft_batch,
            max_length=args.sft_max_length, loss_rows_per_template=0,
            learning_rate=5e-5 if args.sft_method == "full" else 5e-4))
        console.print(f"SFT: {result.steps} steps, loss {result.losses[0]:.3f} → {result.losses[-1]:.3f}, "
                      f"{result.tokens_per_s:.0f} tok/s, {result.seconds:.0f} s")
        model = result.checkpoint_dir
        for split in splits:
            results.append(evaluate_dir(model, split, args, "sft"))
    if "rl" in stages:
        from devices.suite.instances import generate_split
        from trainer.rl import RlConfig, run_grpo

        tasks = generate_split("train", 1, args.seed + 1)
        result = run_grpo(model, tasks, out / "rl", RlConfig(
            max_steps=args.rl_steps, num_generations=args.rl_group, max_completion_length=args.rl_max_completion,
            max_tool_calls=args.rl_tool_calls, temperature=1.0, learning_rate=1e-6))
        console.print(f"GRPO+CARE: {result.steps} steps, {result.steps_per_s:.3f} steps/s, "
                      f"regimes {result.regime_counts}")
        model = result.checkpoint_dir
        for split in splits:
            results.append(evaluate_dir(model, split, args, "rl"))
    table = Table("stage", "split", "episodes", "overall [95% CI]", "success", "valid", "prompt tok (median)",
                  "out tok", "tool calls", "s", title=f"learning bench: {args.model}")
    for data in results:
        _row(table, data)
    console.print(table)


if __name__ == "__main__":
    main()
