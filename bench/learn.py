"""Learning bench: a base model → SFT → GRPO+CARE, scored on dev and test (held-out templates) with intervals.

Run (hours on 2 CPU cores, minutes on one GPU; SmolLM2-135M by default):

    python bench/learn.py --model var/models/smollm2-135m --stages zero,sft,corrections,rl --n 1 --out var/bench/learn
    python bench/learn.py --stages zero,sft,rl,ablation --batch-size 256 --rl-steps 8 ...   # on a GPU

Each stage writes `<out>/<stage>-<split>.json` (overall, per family and tier, success, tokens,
tool calls, validity, prompt tokens, 95% bootstrap intervals) and prints a summary table.
`--stages zero` alone measures the base model zero-shot (and with `--constrained` with
lm-format-enforcer's JSON constraint). `ablation` trains plain GRPO (no CARE) from the same SFT
checkpoint with the same tasks, seeds and settings as `rl`, and scores it the same way.
`corrections` (after `sft`) is a DAgger round: the SFT model plays training tasks with new values,
its failures become the oracle's continuations from their first wrong step (bench/dagger.py), and
SFT continues on them with a replay of the SFT data; `rl` then starts from that checkpoint. On a GPU
the model runs in bf16 and `--batch-size` episodes are decoded together (trainer.batched).
Everything ends up in `<out>/learn.json` and `<out>/learn.png` (score per stage and split, 95% CI).
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console
from rich.table import Table

from bench.report import trainer_logging

__all__ = ["main"]

logger = logging.getLogger(__name__)
console = Console()


def _tasks(split: str, n: int, seed: int, max_steps: int, limit: int | None,
           per_family: int | None = None, tiers: list[str] | None = None) -> list:
    """The split's tasks, capped at `max_steps`; with `per_family`, a seeded sample of that many
    templates from each family (every instance of a chosen template), so a slice still covers
    every family, and the slice of K is part of the slice of K+1; then at most `limit` tasks, taken
    instance by instance (each template's first, then each one's second), so a limit covers templates."""
    from devices.suite.instances import first_instances, generate_split, of_tiers

    tasks = [t.model_copy(update={"max_steps": min(t.max_steps, max_steps)})
             for t in of_tiers(generate_split(split, n, seed), tiers)]
    if per_family:
        by_family: dict[str, list[str]] = {}
        for task in tasks:
            names = by_family.setdefault(task.family, [])
            if task.template not in names:
                names.append(task.template)
        rng = random.Random(f"{split}:{seed}")
        chosen = set()
        for names in by_family.values():  # a seeded order per family: a smaller slice is a prefix
            rng.shuffle(names)
            chosen.update(names[:per_family])
        tasks = [t for t in tasks if t.template in chosen]
    return first_instances(tasks, limit)


def _tiers(args: argparse.Namespace) -> list[str] | None:
    return [t for t in (args.tier or "").split(",") if t] or None


def evaluate_dir(model: Path, split: str, args: argparse.Namespace, label: str, *, constrained: bool = False) -> dict:
    from trainer.evaluate import evaluate_policy
    from trainer.policy import load_policy

    policy = load_policy(model, constrained=constrained, max_new_tokens=args.max_new_tokens,
                         dtype=None if args.dtype == "auto" else args.dtype)
    limit = args.constrained_limit if constrained else args.limit
    started = time.monotonic()
    tasks = _tasks(split, args.n, args.seed, args.max_steps, limit, args.per_family, _tiers(args))
    summary = evaluate_policy(policy, tasks, split=split,
                              batch_size=args.batch_size)
    from trainer.loop import learnable_templates

    data = summary.to_json_dict() | {"label": label, "model": str(model), "constrained": constrained,
                                     "learnable_templates": learnable_templates(summary),
                                     "seconds": round(time.monotonic() - started, 1),
                                     "steps": policy.stats.steps, "invalid": policy.stats.invalid,
                                     "invalid_reasons": policy.stats.invalid_reasons}
    if args.next_action and not constrained:
        from trainer.next_action import next_action_accuracy

        teacher = load_policy(model, max_new_tokens=args.max_new_tokens, dtype=None if args.dtype == "auto" else args.dtype)
        data["next_action"] = next_action_accuracy(teacher, tasks[:args.next_action]).to_json_dict()
        console.print(f"{label} on {split}: teacher-forced next action {data['next_action']['correct']}/"
                      f"{data['next_action']['steps']}")
    out = Path(args.out) / f"{label}-{split}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=2))
    console.print(f"{label} on {split}: overall {data['overall']:.3f} {data['overall_ci']}, success "
                  f"{data['success']:.3f}, valid {data['validity']:.2f}, {data['seconds']:.0f} s")
    return data


STAGE_ORDER = ["zero", "zero-constrained", "sft", "corrections", "rl", "rl-nocare"]


def _with_earlier(out: Path, results: list[dict]) -> list[dict]:
    """This run's results plus those an earlier run left in `out` (stages can run one at a time,
    e.g. SFT today and GRPO from its checkpoint tomorrow), in stage order, this run's winning."""
    merged = {(r["label"], r["split"]): r for r in results}
    for path in sorted(out.glob("*-*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and {"label", "split", "overall", "overall_ci"} <= data.keys():
            merged.setdefault((data["label"], data["split"]), data)
    rank = {label: i for i, label in enumerate(STAGE_ORDER)}
    return sorted(merged.values(), key=lambda r: (rank.get(r["label"], len(rank)), r["split"]))


def plot(results: list[dict], path: Path) -> Path:
    """Overall score with its 95% interval per stage, one series per split."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stages = list(dict.fromkeys(r["label"] for r in results))
    fig, ax = plt.subplots(figsize=(6, 3.2))
    for offset, split in enumerate(dict.fromkeys(r["split"] for r in results)):
        rows = {r["label"]: r for r in results if r["split"] == split}
        xs = [i + 0.15 * offset for i, stage in enumerate(stages) if stage in rows]
        ys = [rows[stage]["overall"] for stage in stages if stage in rows]
        low = [rows[s]["overall"] - rows[s]["overall_ci"][0] for s in stages if s in rows]
        high = [rows[s]["overall_ci"][1] - rows[s]["overall"] for s in stages if s in rows]
        ax.errorbar(xs, ys, yerr=[low, high], marker="o", linestyle="none", capsize=3, label=split)
    ax.set_xticks(range(len(stages)), stages)
    ax.set_ylabel("overall score (95% CI)")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def train_rl(model: Path, out: Path, args: argparse.Namespace, *, care: bool, steps: int | None = None,
             learnable: list[str] | None = None) -> Any:
    """GRPO (+CARE when `care`) from `model` on training tasks; the same tasks and seeds either way:
    of the `learnable` templates (the SFT model's 0 < success < 1 on dev) when there are any."""
    from trainer.rl import RlConfig, run_grpo

    tasks = _tasks("train", 1, args.seed + 1, args.max_steps, None, None, _tiers(args))
    if learnable and any(t.template in learnable for t in tasks):
        tasks = [t for t in tasks if t.template in learnable]
    console.print(f"GRPO tasks: {len({t.template for t in tasks})} templates"
                  + (" (0 < success < 1 after SFT)" if learnable else " (none between 0 and 1: all)"))
    random.Random(args.seed).shuffle(tasks)
    result = run_grpo(model, tasks, out, RlConfig(
        max_steps=steps or args.rl_steps, max_seconds=None if steps else args.rl_max_seconds,
        num_generations=args.rl_group, tasks_per_step=args.rl_tasks_per_step,
        max_completion_length=args.rl_max_completion, max_tool_calls=args.rl_tool_calls, temperature=1.0,
        learning_rate=args.rl_lr, care=care, seed=args.seed))
    label = "GRPO+CARE" if care else "GRPO"
    console.print(f"{label}: {result.steps} steps, {result.seconds / max(1, result.steps):.1f} s/step, "
                  f"train success {result.metrics['success']:.3f}, output tokens "
                  f"{result.metrics['mean_output_tokens']:.1f}, regimes {result.regime_counts}")
    (out / "rl_metrics.json").write_text(json.dumps(result.metrics | {"regimes": result.regime_counts,
                                                                      "steps": result.steps}, indent=2))
    return result


def corrections_round(model: Path, out: Path, args: argparse.Namespace, splits: list[str],
                      results: list[dict]) -> Path:
    """DAgger: `model` plays training tasks with new values (`--corrections-n` per template), its
    failures become the oracle's continuations from their first wrong step (bench/dagger.py), and
    SFT from `model` on them plus a replay of the SFT snapshot's episodes; scored like SFT."""
    from bench.dagger import collect_corrections, correction_snapshot
    from trainer.policy import load_policy
    from trainer.sft import SftConfig, run_sft

    policy = load_policy(model, max_new_tokens=args.max_new_tokens, dtype=None if args.dtype == "auto" else args.dtype)
    tasks = _tasks("train", args.corrections_n, args.seed + 7, args.max_steps, None, None, _tiers(args))
    started = time.monotonic()
    found = collect_corrections(policy, tasks)
    snapshot, makeup = correction_snapshot(out / "snapshot-corrections", found, out / "snapshot",
                                           replay=args.corrections_replay, seed=args.seed)
    makeup["collect_seconds"] = round(time.monotonic() - started, 1)
    console.print(f"corrections: {found.failed}/{found.episodes} train episodes failed, {found.corrected} "
                  f"continued by the oracle → {makeup['correction_rows']} correction rows + "
                  f"{makeup['replay_rows']} replayed ({makeup['correction_share']:.0%} corrections); first wrong "
                  f"step by the oracle's action there: {found.first_wrong_actions}")
    result = run_sft(model, snapshot, out / "corrections", SftConfig(
        method=args.sft_method, epochs=args.corrections_epochs, batch_size=args.sft_batch,
        max_length=args.sft_max_length, loss_rows_per_template=0, precision=args.sft_precision,
        learning_rate=args.sft_lr or (5e-5 if args.sft_method == "full" else 5e-4)))
    makeup |= {"steps": result.steps, "seconds": result.seconds, "tokens_per_s": result.tokens_per_s}
    (out / "corrections_result.json").write_text(json.dumps(makeup, indent=2))
    console.print(f"corrections SFT: {result.steps} steps, {result.tokens_per_s:.0f} tok/s, {result.seconds:.0f} s")
    for split in splits:
        results.append(evaluate_dir(result.checkpoint_dir, split, args, "corrections"))
    return result.checkpoint_dir


def _row(table: Table, data: dict) -> None:
    lo, hi = data["overall_ci"]
    table.add_row(data["label"], data["split"], str(data["episodes"]), f"{data['overall']:.3f} [{lo:.3f}, {hi:.3f}]",
                  f"{data['success']:.3f}", f"{data['validity']:.2f}", f"{data['median_prompt_tokens']:.0f}",
                  f"{data['mean_output_tokens']:.1f}", f"{data['mean_tool_calls']:.2f}", f"{data['seconds']:.0f}",
                  f"{data['next_action']['correct']}/{data['next_action']['steps']}" if "next_action" in data else "—")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="var/models/smollm2-135m")
    parser.add_argument("--stages", default="zero,sft,rl", help="comma list of zero, sft, corrections, rl, ablation")
    parser.add_argument("--splits", default="dev,test")
    parser.add_argument("--ablation-splits", default="dev",
                        help="splits the GRPO-without-CARE model is scored on ('': none, training metrics only)")
    parser.add_argument("--n", type=int, default=1, help="instances per template")
    parser.add_argument("--limit", type=int, default=None, help="at most this many tasks per split")
    parser.add_argument("--per-family", type=int, default=None,
                        help="score a seeded sample of this many templates per family (a CPU-sized slice)")
    parser.add_argument("--dtype", default="auto", choices=["auto", "float32", "bfloat16"],
                        help="evaluation dtype (auto: bf16 on a GPU, fp32 on a CPU)")
    parser.add_argument("--constrained-limit", type=int, default=40, help="tasks per split with --constrained")
    parser.add_argument("--batch-size", type=int, default=8, help="episodes decoded together")
    parser.add_argument("--max-steps", type=int, default=8, help="steps per episode")
    parser.add_argument("--max-new-tokens", type=int, default=96)
    parser.add_argument("--sft-checkpoint", default=None,
                        help="with stage sft: score this SFT checkpoint instead of training one; without it, "
                        "the checkpoint later stages start from")
    parser.add_argument("--sft-n", type=int, default=3, help="train instances per template for SFT")
    parser.add_argument("--sft-recovery", type=float, default=0.0,
                        help="share of SFT episodes with a slip and the oracle's recovery (recovery rows)")
    parser.add_argument("--sft-epochs", type=float, default=1.0)
    parser.add_argument("--sft-max-steps", type=int, default=-1, help="cap on SFT steps (-1: epochs)")
    parser.add_argument("--sft-batch", type=int, default=2)
    parser.add_argument("--sft-max-length", type=int, default=3072,
                        help="tokens per SFT example (a longer row loses its oldest steps, never the row)")
    parser.add_argument("--sft-method", default="full", choices=["full", "lora"])
    parser.add_argument("--sft-lr", type=float, default=None, help="SFT learning rate (default 5e-5 full, 5e-4 LoRA)")
    parser.add_argument("--sft-precision", default="auto", choices=["auto", "bf16", "fp32"],
                        help="SFT precision (auto: bf16 mixed precision where the CPU or GPU has native bf16)")
    parser.add_argument("--corrections-n", type=int, default=2,
                        help="corrections stage: train instances per template the model plays (new values)")
    parser.add_argument("--corrections-replay", type=float, default=1.0,
                        help="corrections stage: SFT-snapshot episodes replayed per corrected episode")
    parser.add_argument("--corrections-epochs", type=float, default=1.0)
    parser.add_argument("--rl-steps", type=int, default=10)
    parser.add_argument("--rl-group", type=int, default=8, help="G: rollouts per task")
    parser.add_argument("--rl-tasks-per-step", type=int, default=1, help="groups per optimiser step")
    parser.add_argument("--rl-lr", type=float, default=1e-6)
    parser.add_argument("--rl-max-seconds", type=float, default=None,
                        help="GRPO+CARE stops after this many seconds; the ablation then runs as many steps")
    parser.add_argument("--rl-max-completion", type=int, default=256)
    parser.add_argument("--rl-tool-calls", type=int, default=6)
    parser.add_argument("--constrained", action="store_true", help="also evaluate with constrained decoding")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--next-action", type=int, default=0,
                        help="also score teacher-forced exact next action on the first N tasks of each split")
    parser.add_argument("--tier", default=None, help="comma list of tiers (easy, medium, hard): only their "
                        "templates are trained on and scored")
    parser.add_argument("--out", default="var/bench/learn")
    args = parser.parse_args(argv)
    trainer_logging(args.threads)
    stages = args.stages.split(",")
    splits = args.splits.split(",")
    out = Path(args.out)
    results = []
    model = Path(args.model)
    if "zero" in stages:
        for split in splits:
            results.append(evaluate_dir(model, split, args, "zero"))
    if "sft" in stages and args.sft_checkpoint:  # scored only: trained by an earlier run
        model = Path(args.sft_checkpoint)
        for split in splits:
            results.append(evaluate_dir(model, split, args, "sft"))
    elif "sft" in stages:
        from trainer.data import build_oracle_snapshot
        from trainer.sft import SftConfig, run_sft

        snapshot = build_oracle_snapshot(out / "snapshot", n_per_template=args.sft_n, suite_seed=args.seed,
                                         tiers=_tiers(args), recovery=args.sft_recovery)
        result = run_sft(model, snapshot, out / "sft", SftConfig(
            method=args.sft_method, epochs=args.sft_epochs, max_steps=args.sft_max_steps, batch_size=args.sft_batch,
            max_length=args.sft_max_length, loss_rows_per_template=0, precision=args.sft_precision,
            learning_rate=args.sft_lr or (5e-5 if args.sft_method == "full" else 5e-4)))
        console.print(f"SFT: {result.steps} steps, loss {result.losses[0]:.3f} → {result.losses[-1]:.3f}, "
                      f"{result.tokens_per_s:.0f} tok/s, {result.seconds:.0f} s")
        model = result.checkpoint_dir
        (out / "sft_result.json").write_text(json.dumps({"steps": result.steps, "seconds": result.seconds,
                                                         "tokens_per_s": result.tokens_per_s,
                                                         "loss_first": result.losses[0],
                                                         "loss_last": result.losses[-1]}, indent=2))
        for split in splits:
            results.append(evaluate_dir(model, split, args, "sft"))
    if "corrections" in stages:
        if "sft" not in stages and args.sft_checkpoint:  # continue an earlier run's SFT checkpoint
            model = Path(args.sft_checkpoint)
        model = corrections_round(model, out, args, splits, results)
    sft_model = model
    # The ablation runs right after GRPO+CARE (same steps, same tasks and seeds), and the least
    # essential scores come last, so a run cut short by a time limit keeps the comparisons.
    rl_steps = None
    sft_dev = next((r for r in results if r["label"] == "sft" and r["split"] == "dev"), None)
    learnable = (sft_dev or {}).get("learnable_templates") or []
    if "rl" in stages:
        rl = train_rl(sft_model, out / "rl", args, care=True, learnable=learnable)
        rl_steps = rl.steps
        results.append(evaluate_dir(rl.checkpoint_dir, splits[0], args, "rl"))
    if "ablation" in stages:
        plain = train_rl(sft_model, out / "rl-nocare", args, care=False, steps=rl_steps, learnable=learnable)
        for split in filter(None, args.ablation_splits.split(",")):
            results.append(evaluate_dir(plain.checkpoint_dir, split, args, "rl-nocare"))
    if "rl" in stages:
        for split in splits[1:]:
            results.append(evaluate_dir(rl.checkpoint_dir, split, args, "rl"))
    if "zero" in stages and args.constrained:
        for split in splits:
            results.append(evaluate_dir(Path(args.model), split, args, "zero-constrained", constrained=True))
    results = _with_earlier(out, results)
    (out / "learn.json").write_text(json.dumps({"model": args.model, "args": vars(args), "results": results},
                                               indent=2))
    if results:
        plot(results, out / "learn.png")
    table = Table("stage", "split", "episodes", "overall [95% CI]", "success", "valid", "prompt tok (median)",
                  "out tok", "tool calls", "s", "next action", title=f"learning bench: {args.model}")
    for data in results:
        _row(table, data)
    console.print(table)


if __name__ == "__main__":
    main()
