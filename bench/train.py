"""Training bench, in one run: SFT tokens/s against a plain TRL script, GRPO steps/s, GRPO vs GRPO+CARE.

    python bench/train.py --model var/models/smollm2-135m --sft-steps 6 --rl-steps 2 --ablation-steps 4

1. SFT throughput: `trainer.sft.run_sft` and a plain TRL `SFTTrainer` script (fp32, TRL's CPU
   defaults: the LM head on every position) on the same rendered examples, model, batch and steps;
   reports tokens/s of each (medians of `--reps` runs, in alternating order) and the ratio ours /
   plain (≥ 0.95 with the same settings; ours adds bf16 and answer-only scoring where they pay).
2. GRPO+CARE steps/s with in-process SimPhone environments.
3. Episode packing (`--packing-steps` > 0): SFT on the easy tier's oracle snapshot with one row
   per step and with an episode's steps packed into one sequence, the same steps and batch each;
   reports answers (rows) taught per second of each and the ratio packed / per-row.
4. Precision and LM-head positions (`--precision-steps` > 0): SFT on the easy tier's packed oracle
   episodes in fp32 and bf16 mixed precision, with the LM head on every position (TRL's CPU
   default) and on the answer positions only (`trainer.answer_positions`); medians of `--reps`
   runs each, in rotating order, and each ratio against fp32 on every position (the old default).
5. Ablation (`--ablation-steps` > 0): GRPO and GRPO+CARE from the same checkpoint with the same
   seeds and tasks, then both evaluated on the same dev tasks: success and mean output tokens.
Results go to `<out>/train.json` and a summary table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console
from rich.table import Table

from bench.report import trainer_logging

__all__ = ["main"]

console = Console()


def plain_trl_sft(model_dir: Path, examples: list[dict[str, str]], out: Path, steps: int, batch: int,
                  max_length: int) -> float:
    """The baseline: a plain TRL SFT script on the same data; returns tokens/s."""
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    tokenizer.padding_side = "right"
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    cuda = torch.cuda.is_available()
    args = SFTConfig(output_dir=str(out), max_steps=steps, per_device_train_batch_size=batch, learning_rate=5e-5, seed=0,
                     use_cpu=not cuda, bf16=cuda, completion_only_loss=True, packing=False, report_to="none", save_strategy="no", logging_steps=1,
                     gradient_checkpointing=False, disable_tqdm=True, max_length=max_length,
                     lr_scheduler_type="constant")
    trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(examples), processing_class=tokenizer)
    started = time.monotonic()
    trainer.train()
    seconds = time.monotonic() - started
    tokens = [e["num_tokens"] for e in trainer.state.log_history if "num_tokens" in e][-1]
    return tokens / seconds


def precision_bench(model: Path, out: Path, steps: int, reps: int) -> dict[str, Any]:
    """SFT tokens/s in fp32 and bf16, the LM head on every position and on the answers only: medians
    of `reps` runs in rotating order, final losses, and each ratio against fp32 on every position."""
    from contextlib import nullcontext

    from trainer.answer_positions import every_position
    from trainer.data import build_oracle_snapshot
    from trainer.sft import SftConfig, run_sft

    easy = build_oracle_snapshot(out / "snapshot-easy", n_per_template=1, tiers=["easy"], recovery=0.3)
    variants = [(p, where) for p in ("fp32", "bf16") for where in ("every", "answers")]
    speed: dict[str, list[float]] = {f"{p}/{w}": [] for p, w in variants}
    loss: dict[str, list[float]] = {f"{p}/{w}": [] for p, w in variants}
    for rep in range(reps):
        for precision, where in variants[rep % len(variants):] + variants[:rep % len(variants)]:
            key = f"{precision}/{where}"
            with every_position() if where == "every" else nullcontext():
                r = run_sft(model, easy, out / f"sft-{precision}-{where}-{rep}", SftConfig(
                    max_steps=steps, batch_size=1, max_length=3072, learning_rate=2e-4, precision=precision,
                    loss_rows_per_template=0))
            speed[key].append(r.tokens_per_s)
            loss[key].append(r.losses[-1])
            console.print(f"SFT {key}: {r.tokens_per_s:.0f} tok/s, last loss {r.losses[-1]:.3f}")
    base = statistics.median(speed["fp32/every"])
    table = Table(title=f"SFT tokens/s, SmolLM2 packed easy episodes ({steps} steps, median of {reps})")
    for column in ("precision / LM head on", "tok/s", "× fp32 every", "last loss"):
        table.add_column(column, justify="left" if column.startswith("precision") else "right")
    summary: dict[str, Any] = {}
    for key, runs in speed.items():
        median = statistics.median(runs)
        summary[key] = {"tokens_per_s": median, "ratio": median / base, "last_loss": statistics.median(loss[key]),
                        "runs": runs}
        table.add_row(key, f"{median:.0f}", f"{median / base:.2f}", f"{summary[key]['last_loss']:.3f}")
    console.print(table)
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="var/models/smollm2-135m")
    parser.add_argument("--sft-steps", type=int, default=6)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--max-length", type=int, default=1024, help="tokens per SFT example (memory: ~5 GB at 2×1024)")
    parser.add_argument("--reps", type=int, default=1, help="SFT runs of each script (medians reported)")
    parser.add_argument("--rl-steps", type=int, default=2, help="GRPO+CARE steps timed (0: skip)")
    parser.add_argument("--group", type=int, default=4)
    parser.add_argument("--ablation-steps", type=int, default=0)
    parser.add_argument("--packing-steps", type=int, default=0, help="SFT steps of each side of the packing bench")
    parser.add_argument("--precision-steps", type=int, default=0,
                        help="SFT steps of each precision × LM-head-positions run (0: skip)")
    parser.add_argument("--eval-limit", type=int, default=10)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--out", default="var/bench/train")
    args = parser.parse_args(argv)
    trainer_logging(args.threads)
    from devices.suite.instances import generate_split
    from trainer.answer_positions import every_position
    from trainer.data import build_oracle_snapshot, read_snapshot, render_examples
    from trainer.models import load_model
    from trainer.rl import RlConfig, run_grpo
    from trainer.sft import SftConfig, run_sft

    out = Path(args.out)
    model = Path(args.model)
    snapshot = build_oracle_snapshot(out / "snapshot", n_per_template=1)
    examples, _ = render_examples(read_snapshot(snapshot), load_model(model).tokenizer)
    results: dict = {"model": str(model), "threads": args.threads, "snapshot_rows": len(examples),
                     "batch": args.batch, "max_length": args.max_length}

    if args.sft_steps:  # 0: skip the comparison with a plain TRL script
        # A discarded warm-up run first: the first training run in a process pays for CUDA start-up and
        # kernel selection, which would otherwise count against whichever script ran first.
        plain_trl_sft(model, examples, out / "warmup", min(args.sft_steps, 3), args.batch, args.max_length)
        ours, plain = [], []
        for rep in range(args.reps):
            order = ("ours", "plain") if rep % 2 == 0 else ("plain", "ours")
            for which in order:
                if which == "ours":
                    r = run_sft(model, snapshot, out / f"sft-{rep}", SftConfig(
                        max_steps=args.sft_steps, batch_size=args.batch, max_length=args.max_length,
                        loss_rows_per_template=0))
                    ours.append(r.tokens_per_s)
                    results["sft_seconds_per_step"] = r.seconds / max(1, r.steps)
                    results["sft_checkpoint"] = str(r.checkpoint_dir)
                else:
                    with every_position():
                        plain.append(plain_trl_sft(model, examples, out / f"plain-{rep}", args.sft_steps, args.batch,
                                                   args.max_length))
                console.print(f"SFT {which}: {(ours if which == 'ours' else plain)[-1]:.0f} tok/s")
        results["sft_tokens_per_s"] = statistics.median(ours)
        results["plain_trl_tokens_per_s"] = statistics.median(plain)
        results["sft_ratio"] = results["sft_tokens_per_s"] / results["plain_trl_tokens_per_s"]

    if args.packing_steps:
        easy = build_oracle_snapshot(out / "snapshot-easy", n_per_template=1, tiers=["easy"], recovery=0.3)
        for label, packed in (("per_row", False), ("packed", True)):
            r = run_sft(model, easy, out / f"sft-{label}", SftConfig(
                max_steps=args.packing_steps, batch_size=args.batch, max_length=3072, loss_rows_per_template=0,
                pack_episodes=packed))
            results[f"sft_{label}_rows_per_s"] = r.metrics["rows_per_s"]
            results[f"sft_{label}_tokens_per_s"] = r.tokens_per_s
            console.print(f"SFT {label}: {r.metrics['rows_per_s']:.3f} rows/s, {r.tokens_per_s:.0f} tok/s")
        results["packing_ratio"] = results["sft_packed_rows_per_s"] / results["sft_per_row_rows_per_s"]

    if args.precision_steps:
        results["precision"] = precision_bench(model, out, args.precision_steps, args.reps)

    tasks = generate_split("train", 1, 1)
    if args.rl_steps:
        rl = run_grpo(results["sft_checkpoint"], tasks, out / "rl", RlConfig(
            max_steps=args.rl_steps, num_generations=args.group, max_completion_length=192, max_tool_calls=4))
        results["grpo_steps_per_s"] = rl.steps_per_s
        results["grpo_seconds_per_step"] = rl.seconds / max(1, rl.steps)
        results["grpo_regimes"] = rl.regime_counts
        console.print(f"GRPO+CARE: {rl.seconds / max(1, rl.steps):.1f} s/step, regimes {rl.regime_counts}")

    if args.ablation_steps:
        from trainer.evaluate import evaluate_policy
        from trainer.policy import load_policy

        dev = [t.model_copy(update={"max_steps": min(t.max_steps, 4)})
               for t in generate_split("dev", 1, 0)][:args.eval_limit]
        for label, care in (("grpo", False), ("grpo+care", True)):
            run = run_grpo(results["sft_checkpoint"], tasks, out / label, RlConfig(
                max_steps=args.ablation_steps, num_generations=args.group, care=care, seed=0,
                max_completion_length=192, max_tool_calls=4))
            summary = evaluate_policy(load_policy(run.checkpoint_dir), dev, split="dev", progress=False)
            results[f"ablation_{label}"] = {"success": summary.success, "overall": summary.overall,
                                            "overall_ci": summary.overall_ci,
                                            "mean_output_tokens": summary.mean_output_tokens,
                                            "train_success": run.metrics["success"],
                                            "train_mean_output_tokens": run.metrics["mean_output_tokens"]}
    (out / "train.json").write_text(json.dumps(results, indent=2, default=str))
    table = Table("measure", "value", title=f"training bench: {model}")
    for key, value in results.items():
        table.add_row(key, f"{value:.3f}" if isinstance(value, float) else json.dumps(value, default=str))
    console.print(table)


if __name__ == "__main__":
    main()
