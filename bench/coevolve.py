"""Co-evolution bench: `flywheel run --generations N`'s model and harness rounds, without the bus.

    python bench/coevolve.py --model var/models/smollm2-135m --generations 3 --out var/bench/coevolve

Each generation updates the model (SFT on an oracle snapshot first, GRPO+CARE after: trainer.loop,
in the harness current at that generation) and then the harness on the new checkpoint's failures
(services.cli.rounds_phase.HarnessRounds: failure traces → proposals → the paired dev/test gate →
promotions into `<out>/harness`). The per-round table (before / model alone / harness alone /
both, on dev and test), every decision with the failure ids that motivated it, and the plot land
in `<out>/rounds/<run>/`; every event the run produced is in `<out>/events.jsonl`. Trace a
promotion to its failures with DuckDB:

    SELECT d.proposal_id, d.outcome, f FROM '<out>/rounds/*/decisions.parquet' d, unnest(d.motivated_by) t(f)

One harness round on a checkpoint you already trained (it stands as generation 1; its dev scores
per template pick the round's templates, services.cli.rounds_phase.competence_templates):

    python bench/coevolve.py --checkpoint var/run/checkpoints/<run>/gen1 --generations 1 --tier easy \
        --batch-size 1 --max-steps 6 --eval-n 2 --templates 3 --out var/bench/coevolve-ck

On a GPU the model runs in bf16 and episodes are decoded in batches; on 2 CPU cores SmolLM2 takes
hours, the tiny model (`--model tiny`) minutes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console

from bench.report import trainer_logging

__all__ = ["main"]

console = Console()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="var/models/smollm2-135m", help="a model directory, or 'tiny'")
    parser.add_argument("--generations", type=int, default=3)
    parser.add_argument("--sft-n", type=int, default=3, help="oracle train instances per template for SFT")
    parser.add_argument("--sft-steps", type=int, default=-1, help="SFT steps (-1: one epoch)")
    parser.add_argument("--sft-batch", type=int, default=16)
    parser.add_argument("--sft-lr", type=float, default=5e-5)
    parser.add_argument("--rl-steps", type=int, default=4)
    parser.add_argument("--rl-group", type=int, default=8)
    parser.add_argument("--rl-lr", type=float, default=2e-6)
    parser.add_argument("--rl-max-completion", type=int, default=768)
    parser.add_argument("--rl-tool-calls", type=int, default=5)
    parser.add_argument("--eval-templates", type=int, default=0, help="dev templates of the trainer's own eval (0: all)")
    parser.add_argument("--templates", type=int, default=12, help="templates of each harness round (0: all)")
    parser.add_argument("--n", type=int, default=2, help="instances per template and split in a round")
    parser.add_argument("--max-steps", type=int, default=8, help="steps per episode")
    parser.add_argument("--max-new-tokens", type=int, default=144)
    parser.add_argument("--proposals", type=int, default=3, help="gated proposals per round")
    parser.add_argument("--batch-size", type=int, default=256, help="episodes decoded together")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tier", default="", help="comma list of tiers the trainer evaluates and GRPO draws from")
    parser.add_argument("--dtype", default="auto", help="weights when scoring: auto, bfloat16 or float32")
    parser.add_argument("--eval-n", type=int, default=1, help="dev instances per template in the trainer's own eval")
    parser.add_argument("--checkpoint", type=Path, default=None,
                        help="a trained checkpoint to start from: it stands as generation 1 (reused, not "
                             "retrained, then scored and given its harness round)")
    parser.add_argument("--out", default="var/bench/coevolve")
    args = parser.parse_args(argv)
    trainer_logging()

    from services.cli.rounds_phase import HarnessRoundConfig, HarnessRounds
    from trainer.data import build_oracle_snapshot
    from trainer.loop import LoopConfig, run_generations
    from trainer.models import build_tiny

    out = Path(args.out)
    model = build_tiny(out / "tiny") if args.model == "tiny" else Path(args.model)
    # (with --checkpoint nothing trains on it: one instance per template is enough)
    snapshot = build_oracle_snapshot(out / "snapshot", n_per_template=1 if args.checkpoint else args.sft_n,
                                     suite_seed=args.seed)
    if args.checkpoint is not None:  # run_generations reuses a finished checkpoint where gen1 would go
        (out / "checkpoints").mkdir(parents=True, exist_ok=True)
        first = out / "checkpoints" / "gen1"
        if not first.exists():
            first.symlink_to(args.checkpoint.resolve(), target_is_directory=True)
    run_id = f"coevolve-{int(time.time())}"
    events: list = []
    config = LoopConfig(
        generations=args.generations, sft_steps=args.sft_steps, sft_lr=args.sft_lr, sft_batch_size=args.sft_batch,
        rl_steps=args.rl_steps, num_generations=args.rl_group, rl_lr=args.rl_lr,
        max_completion_length=args.rl_max_completion, max_tool_calls=args.rl_tool_calls,
        eval_templates=args.eval_templates, eval_max_steps=args.max_steps, eval_batch_size=args.batch_size,
        tiers=args.tier, eval_n=args.eval_n, eval_dtype=args.dtype, general=False, seed=args.seed)
    rounds = HarnessRounds(out, HarnessRoundConfig(
        templates=args.templates, n_per_template=args.n, max_proposals=args.proposals, max_steps=args.max_steps,
        max_new_tokens=args.max_new_tokens, seed=args.seed, batch_size=args.batch_size,
        dtype=config.policy_dtype), run_id=run_id, base_model=model, emit=events.append)
    started = time.monotonic()
    summaries = run_generations(model, snapshot, out / "checkpoints", config, run_id=run_id, on_event=events.append,
                                on_generation=rounds.after_generation, harness=rounds.registry.current_spec)
    with (out / "events.jsonl").open("w") as sink:
        for event in events:
            sink.write(event.model_dump_json() + "\n")
    table = rounds.table()
    if table is not None:
        console.print(table)
    for label, value in rounds.summary_rows():
        console.print(f"{label}: {value}", highlight=False, soft_wrap=True)
    summary = {"model": str(model), "seconds": round(time.monotonic() - started, 1), "run_id": run_id,
               "generations": [{"generation": s.generation, "stage": s.stage, "dev_overall": s.evaluation.overall,
                                "dev_ci": s.evaluation.overall_ci, "harness": s.evaluation.harness}
                               for s in summaries],
               "promotions": [d.proposal_id for d in rounds.report.decisions if d.outcome == "promoted"],
               "harness_now": rounds.registry.current(), "rounds": {k: str(v) for k, v in rounds.paths.items()}}
    (out / "coevolve.json").write_text(json.dumps(summary, indent=2, default=str))
    console.print(f"done in {summary['seconds']:.0f} s: {len(summary['promotions'])} promotion(s); "
                  f"{out / 'coevolve.json'}")


if __name__ == "__main__":
    main()
