"""The training half of `flywheel run`: SFT on the first generation, GRPO+CARE after, evaluate, feed back, repeat.

`run_generations` is a plain function (the run command calls it after the data phase). Each
generation trains from the previous checkpoint, evaluates on the dev split, and returns the
events to publish (checkpoint.saved, rl.group_scored, eval.reported, training.feedback_issued)
with a per-generation summary; `on_event` lets the caller publish as they happen. The feedback
weights the next generation's RL tasks toward weak templates.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from schemas.envelope import Event
from schemas.observations import BlobRef
from schemas.training import (
    CheckpointSaved,
    EvalReported,
    FamilyScores,
    FeedbackStat,
    Interval,
    RlGroupScored,
    TrainingFeedbackIssued,
)
from trainer.evaluate import EvalSummary

__all__ = [
    "LEARNING_DEFAULTS",
    "PRETRAINED_DEFAULTS",
    "GenerationSummary",
    "LoopConfig",
    "checkpoint_event",
    "eval_event",
    "feedback_event",
    "group_events",
    "learnable_templates",
    "loop_config",
    "publisher",
    "run_generations",
    "score_text",
    "topic_for",
]

logger = logging.getLogger(__name__)

SOURCE = "trainer/0.1.0"


@dataclass(frozen=True)
class LoopConfig:
    """The default fits a fresh 2-core machine in minutes on the tiny model; flags scale it up."""

    generations: int = field(default=2, metadata={"help": "Generations: SFT first, GRPO+CARE after."})
    sft_steps: int = field(default=20, metadata={"help": "SFT optimiser steps (0: sft_epochs passes over the snapshot)."})
    sft_lr: float = field(default=3e-3, metadata={"help": "SFT learning rate."})
    rl_steps: int = field(default=2, metadata={"help": "GRPO steps per later generation."})
    num_generations: int = field(default=4, metadata={"help": "G, rollouts per GRPO group."})
    rl_lr: float = field(default=1e-5, metadata={"help": "GRPO learning rate."})
    max_completion_length: int = field(default=96, metadata={"help": "Tokens per rollout."})
    max_tool_calls: int = field(default=2, metadata={"help": "Actions per rollout."})
    rl_gradient_checkpointing: bool = field(default=False, metadata={
        "help": "Recompute GRPO's activations in the backward pass (long prompts on a CPU need it)."})
    eval_n: int = field(default=1, metadata={"help": "Dev instances per template in each evaluation."})
    eval_templates: int = field(default=6, metadata={"help": "Dev templates evaluated (0: all)."})
    eval_max_steps: int = field(default=4, metadata={"help": "Steps per evaluation episode."})
    next_action_tasks: int = field(default=3, metadata={
        "help": "Dev tasks whose oracle steps score teacher-forced exact next action each generation, the "
                "cheap progress signal beside episode success (0: none)."})
    general: bool = field(default=True, metadata={
        "help": "Also measure general capability per checkpoint (trainer.general: perplexity on bundled "
                "text, non-mobile tool requests) and put it in the eval event and the report."})
    eval_batch_size: int = field(default=16, metadata={"help": "Evaluation episodes decoded together (1: one at "
                                                                "a time, each reusing its own prompt cache: faster "
                                                                "on a CPU)."})
    eval_dtype: str = field(default="auto", metadata={"help": "Weights for evaluation: auto (bf16 where the hardware "
                                                              "multiplies it natively: a GPU, or a CPU with "
                                                              "avx512_bf16/amx_bf16; fp32 elsewhere, where bf16 is "
                                                              "emulated and ~5x slower), float32 or bfloat16."})
    sft_epochs: float = field(default=1.0, metadata={"help": "Passes over the snapshot when sft_steps is 0."})
    sft_precision: str = field(default="auto", metadata={
        "help": "SFT arithmetic: auto (bf16 mixed precision where the device multiplies bf16 natively), bf16 or fp32."})
    tiers: str = field(default="", metadata={
        "help": "Comma list of tiers (easy, medium, hard) that evaluation and GRPO draw from (empty: every tier)."})
    eval_splits: str = field(default="dev", metadata={
        "help": "Splits every evaluation scores, comma list: dev (new values; always scored, it is what feeds "
                "back) and test (held-out templates, only reported)."})
    eval_limit: int = field(default=0, metadata={
        "help": "At most this many tasks per split, every template's first instance before any second (0: all)."})
    eval_base: bool = field(default=False, metadata={
        "help": "Score the base model first (generation 0) on the same tasks, so the run shows base vs trained."})
    sft_batch_size: int = field(default=4, metadata={"help": "SFT examples per step."})
    sft_max_length: int = field(default=4096, metadata={
        "help": "Tokens per SFT example: a longer row loses its oldest steps (the tiny model's tokenizer "
                "needs ~2,800 for a sub-agent task's header alone; SmolLM2's longest header, a memory task "
                "showing every app, is 2,435)."})
    seed: int = field(default=0, metadata={"help": "Seed of task sampling."})

    def __post_init__(self) -> None:
        if self.eval_dtype not in EVAL_DTYPES:
            raise ValueError(f"eval_dtype must be one of {', '.join(EVAL_DTYPES)}, not {self.eval_dtype!r}")
        if self.sft_precision not in SFT_PRECISIONS:
            raise ValueError(f"sft_precision must be one of {', '.join(SFT_PRECISIONS)}, not {self.sft_precision!r}")
        from devices.suite.template import TIERS

        if bad := [t for t in self.tier_list if t not in TIERS]:
            raise ValueError(f"tiers must name tiers among {', '.join(TIERS)}, not {', '.join(bad)}")
        if bad := [s for s in self.split_list if s not in EVAL_SPLITS]:
            raise ValueError(f"eval_splits must be dev and/or test, not {', '.join(bad)}")
        if "dev" not in self.split_list:
            raise ValueError("eval_splits must name dev: the dev scores are what feeds back (test only reports)")

    @property
    def tier_list(self) -> list[str]:
        return [t.strip() for t in self.tiers.split(",") if t.strip()]

    @property
    def split_list(self) -> list[str]:
        """The named splits, dev first (the one that feeds back), each once."""
        named = {s.strip() for s in self.eval_splits.split(",") if s.strip()}
        return sorted(named, key=lambda s: EVAL_SPLITS.index(s) if s in EVAL_SPLITS else len(EVAL_SPLITS))

    @property
    def policy_dtype(self) -> str | None:
        """`eval_dtype` as trainer.policy.load_policy takes it: auto is bf16 where bf16 is native
        (trainer.precision.use_bf16, as SFT's auto precision decides), else None (fp32 on a CPU)."""
        if self.eval_dtype != "auto":
            return self.eval_dtype
        import torch

        from trainer.precision import use_bf16

        return "bfloat16" if use_bf16("auto", cuda=torch.cuda.is_available()) else None


EVAL_DTYPES = ("auto", "float32", "bfloat16")
EVAL_SPLITS = ("dev", "test")
SFT_PRECISIONS = ("auto", "bf16", "fp32")


#: What differs for a pretrained base model (SmolLM2 and any local directory): the tiny model's
#: SFT learning rate (3e-3, it starts from random weights) would wreck pretrained weights, and its
#: answers need more tokens than 96 (SmolLM2's SFT answers average ~52 tokens, the longest ~130).
#: GRPO recomputes activations: one G=4 step of SmolLM2 on a task with ~2,800-token rollouts
#: peaked above 24 GB on a CPU (the OOM killer ended `flywheel run`) and at 7.7 GB with it.
PRETRAINED_DEFAULTS: dict[str, Any] = {"sft_lr": 5e-5, "rl_lr": 1e-6, "max_completion_length": 144,
                                       "rl_gradient_checkpointing": True, "sft_max_length": 3072}


#: `flywheel run`'s default (not `--quick`): SmolLM2-135M trained on the easy tier and scored as the
#: base model and after SFT on the same 40 dev and 40 test episodes (every easy template's first
#: instance, then second ones), with 95% intervals. The SFT recipe is the one measured in
#: bench/results/smollm2-cpu-easy-n6 (one pass over the snapshot, lr 2e-4, one packed episode per
#: step, bf16 where the CPU multiplies it natively, loss on the answers only); evaluation in bf16,
#: one episode at a time (each reuses its prompt cache: the fastest on a CPU), up to 6 steps.
LEARNING_DEFAULTS: dict[str, Any] = {
    "tiers": "easy", "eval_splits": "dev,test", "eval_n": 2, "eval_limit": 40, "eval_templates": 0,
    "eval_max_steps": 6, "eval_batch_size": 1, "eval_dtype": "auto", "eval_base": True,
    "sft_steps": 0, "sft_epochs": 1.0, "sft_lr": 2e-4, "sft_batch_size": 1, "sft_max_length": 3072,
    "max_completion_length": 96, "next_action_tasks": 20, "general": False}


# The smallest value each count may take (a GRPO group needs two rollouts to compare).
_LEAST = {"sft_steps": 0, "sft_epochs": 0.01, "rl_steps": 1, "num_generations": 2, "max_completion_length": 1, "max_tool_calls": 1,
          "eval_n": 1, "eval_max_steps": 1, "eval_batch_size": 1, "sft_batch_size": 1, "sft_max_length": 64}


def loop_config(base_model: str, overrides: Sequence[str] = (), *, learning: bool = False,
                **fixed: Any) -> LoopConfig:
    """The LoopConfig for `base_model` ("tiny" keeps the class defaults, any other model gets
    PRETRAINED_DEFAULTS, and with `learning` LEARNING_DEFAULTS on top), then `fixed`, then
    `overrides` given as "field=value" strings (`flywheel run --train sft_steps=200`). Raises
    ValueError naming the field on a bad one."""
    known = {f.name: f for f in fields(LoopConfig)}
    values: dict[str, Any] = {} if base_model == "tiny" else dict(PRETRAINED_DEFAULTS)
    if learning:
        values.update(LEARNING_DEFAULTS)
    values.update(fixed)
    for item in overrides:
        name, sep, raw = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in known or name == "generations":
            raise ValueError(f"--train {item!r}: expected FIELD=VALUE with FIELD one of "
                             f"{', '.join(sorted(set(known) - {'generations'}))}")
        kind = {"int": int, "float": float, "bool": _flag}.get(str(known[name].type), str)
        try:
            value = kind(raw.strip())
        except ValueError:
            raise ValueError(f"--train {item!r}: {name} takes {kind.__name__} values, not {raw.strip()!r}") from None
        least = _LEAST.get(name, 0)
        if kind in (int, float) and (not math.isfinite(value) or value < least or (name.endswith("_lr") and value <= 0)):
            raise ValueError(f"--train {item!r}: {name} must be "
                             + ("above 0 and finite" if name.endswith("_lr") else f"at least {least}"))
        values[name] = value
    return LoopConfig(**values)  # which checks the values no type can (eval_dtype)


def _flag(raw: str) -> bool:
    """A boolean `--train` value: true/false, yes/no, on/off or 1/0."""
    words = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False, "0": False}
    if raw.lower() not in words:
        raise ValueError(raw)
    return words[raw.lower()]


_flag.__name__ = "bool (true or false)"


@dataclass
class GenerationSummary:
    generation: int
    stage: str
    checkpoint_dir: Path
    checkpoint_id: str
    seconds: float
    train_metrics: dict[str, float]
    evaluation: EvalSummary
    weak_templates: list[str]
    #: teacher-forced exact next action on the first `next_action_tasks` dev tasks (None: not measured)
    next_action: dict[str, Any] | None = None
    #: the same checkpoint on the held-out test templates, when `eval_splits` names test beside dev
    held_out: EvalSummary | None = None


def _blob(path: Path) -> BlobRef:
    weights = path / "model.safetensors"
    digest = hashlib.sha256()
    with weights.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return BlobRef(sha256=digest.hexdigest(), size=weights.stat().st_size, media_type="application/safetensors")


def checkpoint_event(meta: dict[str, Any], path: Path, *, causation_id: str | None = None) -> CheckpointSaved:
    """checkpoint.saved for the checkpoint directory `path` (its flywheel_checkpoint.json is `meta`)."""
    metrics = {k: float(v) for k, v in (meta.get("metrics") or {}).items() if isinstance(v, (int, float))}
    from trainer.sft import CHECKPOINT_FILE

    parent = Path(str(meta.get("parent") or "")) / CHECKPOINT_FILE
    parent_id = json.loads(parent.read_text()).get("checkpoint_id") if meta.get("parent") and parent.is_file() else None
    return CheckpointSaved(source=SOURCE, correlation_id=meta["run_id"], causation_id=causation_id,
                           checkpoint_id=meta["checkpoint_id"], run_id=meta["run_id"], stage=meta["stage"],
                           step=int(meta["step"]), base_model=str(meta["base_model"]),
                           snapshot_id=str(meta["snapshot_id"]), weights=_blob(path), metrics=metrics,
                           snapshot_sha256=meta.get("snapshot_sha256"), parent_checkpoint_id=parent_id)


def eval_event(summary: EvalSummary, subject_id: str, *, run_id: str, causation_id: str | None = None,
               subject: str = "checkpoint") -> EvalReported:
    families = {f: summary.families.get(f, 0.0) for f in ("tool", "memory", "skills", "subagent")}
    intervals = {"overall": Interval(low=summary.overall_ci[0], high=summary.overall_ci[1]),
                 "success": Interval(low=summary.success_ci[0], high=summary.success_ci[1])}
    intervals |= {f: Interval(low=lo, high=hi) for f, (lo, hi) in summary.family_ci.items()}
    return EvalReported(source=SOURCE, correlation_id=run_id, causation_id=causation_id, subject=subject,
                        subject_id=subject_id, split=summary.split, episodes=summary.episodes,
                        scores=FamilyScores(**families), overall=min(1.0, max(0.0, summary.overall)),
                        template_scores=summary.templates, tier_scores=summary.tiers, success=summary.success,
                        mean_output_tokens=summary.mean_output_tokens, mean_tool_calls=summary.mean_tool_calls,
                        validity=min(1.0, max(0.0, summary.validity)), intervals=intervals,
                        harness=summary.harness or None)


def feedback_stats(summary: EvalSummary, losses: dict[str, float] | None = None) -> list[FeedbackStat]:
    """Success, tokens and tool calls per family, template and tier from an evaluation's episodes."""
    stats = []
    for scope, key_of in (("family", lambda r: r.family), ("template", lambda r: r.template),
                          ("tier", lambda r: r.tier)):
        groups: dict[str, list[Any]] = {}
        for record in summary.records:
            groups.setdefault(key_of(record), []).append(record)
        for key, records in sorted(groups.items()):
            n = len(records)
            known = [losses[r.template] for r in records if losses and r.template in losses]
            stats.append(FeedbackStat(scope=scope, key=key, episodes=n,  # type: ignore[arg-type]
                                      success=sum(r.success for r in records) / n,
                                      loss=sum(known) / len(known) if known else None,
                                      mean_output_tokens=sum(r.output_tokens for r in records) / n,
                                      mean_tool_calls=sum(r.tool_calls for r in records) / n))
    return stats


def feedback_event(summary: EvalSummary, *, run_id: str, causation_id: str | None = None,
                   losses: dict[str, float] | None = None) -> TrainingFeedbackIssued:
    """Sampling weights that favour what the model fails: weight = 1 − score + a floor, per template and family."""
    weak = sorted(t for t, s in summary.templates.items() if s < 0.5)
    template_weights = {t: round(1.1 - s, 4) for t, s in summary.templates.items()}
    family_weights = {f: round(1.1 - s, 4) for f, s in summary.families.items()}
    return TrainingFeedbackIssued(source=SOURCE, correlation_id=run_id, causation_id=causation_id, run_id=run_id,
                                  family_weights=family_weights, template_weights=template_weights,
                                  weak_templates=weak, stats=feedback_stats(summary, losses),
                                  note=f"dev overall {summary.overall:.3f} over {summary.episodes} episodes")


def group_events(groups: Sequence[Any], *, run_id: str, causation_id: str | None = None) -> list[RlGroupScored]:
    return [RlGroupScored(source=SOURCE, correlation_id=run_id, causation_id=causation_id, run_id=run_id,
                          step=g.step, task_id=g.task_id, template=g.template, family=g.family, regime=g.regime,
                          success_rate=g.success_rate, success=list(g.success), progress=list(g.progress),
                          rewards=list(g.rewards), advantages=list(g.advantages),
                          output_tokens=list(g.output_tokens), tool_calls=list(g.tool_calls)) for g in groups]


def topic_for(event: Event) -> Any:
    """The registered topic that carries `event`'s type."""
    from schemas.topics import TOPICS

    return next(t for t in TOPICS.values() if event.type in t.type_names)


def publisher(producer: Any, sent: list[Any] | None = None) -> Callable[[Event], None]:
    """An `on_event` for run_generations that sends each event to the topic registered for its type
    (e.g. a streams.producer.TypedProducer); futures are appended to `sent` when given."""

    def send(event: Event) -> None:
        future = producer.send(topic_for(event), event)
        if sent is not None:
            sent.append(future)

    return send


def _eval_tasks(config: LoopConfig, split: str = "dev") -> list[Any]:
    """The split's evaluation tasks: `eval_n` instances of every template of `tiers` (the first
    `eval_templates` templates by name when set), at most `eval_limit` taken instance by instance,
    each capped at `eval_max_steps`."""
    from devices.suite.instances import first_instances, generate_split, of_tiers

    tasks = of_tiers(generate_split(split, config.eval_n, config.seed), config.tier_list)  # type: ignore[arg-type]
    if config.eval_templates:
        keep = sorted({t.template for t in tasks})[:config.eval_templates]
        tasks = [t for t in tasks if t.template in keep]
    tasks = first_instances(tasks, config.eval_limit)
    return [t.model_copy(update={"max_steps": min(t.max_steps, config.eval_max_steps)}) for t in tasks]


def learnable_templates(summary: EvalSummary) -> list[str]:
    """Templates whose episodes the model solved sometimes but not always (0 < success < 1) in
    `summary`: where a GRPO group can have reward variance, hence a gradient."""
    by_template: dict[str, list[float]] = {}
    for record in summary.records:
        by_template.setdefault(record.template, []).append(record.success)
    return sorted(t for t, s in by_template.items() if 0.0 < sum(s) / len(s) < 1.0)


def _rl_tasks(config: LoopConfig, weights: dict[str, float], generation: int, count: int,
              learnable: Sequence[str] = ()) -> list[Any]:
    """Train-split tasks for GRPO, drawn with the feedback's template weights; from the
    `learnable` templates only (the last evaluation's 0 < success < 1) when there are any."""
    from devices.suite.instances import generate_split, of_tiers

    pool = of_tiers(generate_split("train", 1, config.seed + generation), config.tier_list)  # type: ignore[arg-type]
    narrowed = [t for t in pool if t.template in set(learnable)]
    if narrowed:
        pool = narrowed
    else:
        logger.info("generation %d: no evaluated template is between 0 and 1 success; GRPO draws from "
                    "every train template (most groups will have no variance and be dropped)", generation)
    rng = random.Random(config.seed * 1000 + generation)
    chosen = rng.choices(pool, weights=[weights.get(t.template, 1.0) for t in pool], k=count)
    return chosen


def run_generations(base_model: str | Path, snapshot_dir: str | Path, out_dir: str | Path,
                    config: LoopConfig | None = None, *, run_id: str = "run",
                    on_event: Callable[[Event], None] | None = None,
                    console: Console | None = None,
                    on_generation: Callable[[GenerationSummary], None] | None = None,
                    harness: Callable[[], Any] | None = None,
                    stop: threading.Event | None = None,
                    ) -> list[GenerationSummary]:
    """SFT (generation 1) then GRPO+CARE (later ones) from `base_model`, evaluating and feeding back each time.

    `on_generation` is called with each generation's summary once its checkpoint is evaluated, before the next
    one trains (`flywheel run` evolves the harness on the new model's failures there). `harness` returns the
    harness spec to train and evaluate in, asked once per generation so a promotion between generations
    reaches GRPO's environments and the evaluation (default: the built-in harness).

    Reruns never overwrite: a generation whose checkpoint is complete in `out_dir` is reused as it is (and
    evaluated again), and one a stop left half done resumes from its last step. A set `stop` ends the run
    between steps, episodes or stages with TrainingStopped (trainer.stopping)."""
    from trainer.envs import PhoneEnvironment
    from trainer.evaluate import evaluate_policy
    from trainer.policy import load_policy
    from trainer.rl import RlConfig, run_grpo
    from trainer.sft import CHECKPOINT_FILE, SftConfig, run_sft
    from trainer.stopping import check_stop

    config = config or LoopConfig()
    console = console or Console(stderr=True)
    emit = on_event or (lambda event: None)
    out = Path(out_dir)
    model = Path(base_model)
    weights: dict[str, float] = {}
    summaries: list[GenerationSummary] = []
    splits = config.split_list  # dev first: its scores feed back, test's are only reported
    tasks_of = {split: _eval_tasks(config, split) for split in splits}
    eval_tasks = tasks_of["dev"]

    def evaluate(policy: Any, subject_id: str, causation_id: str | None, spec: Any) -> dict[str, EvalSummary]:
        """Every split's evaluation of `policy`, each published as eval.reported (dev's with the
        general-capability figures)."""
        found: dict[str, EvalSummary] = {}
        for split in splits:
            found[split] = evaluate_policy(policy, tasks_of[split], split=split, console=console, spec=spec,
                                           batch_size=config.eval_batch_size, stop=stop)
            evaluated = eval_event(found[split], subject_id, run_id=run_id, causation_id=causation_id)
            if config.general and split == "dev":
                from trainer.general import general_capability

                general = general_capability(policy.model, policy.tokenizer)
                evaluated = evaluated.model_copy(update={"general_perplexity": general.perplexity,
                                                         "general_tool_use": general.tool_use})
            emit(evaluated)
        return found

    def next_action_of(policy: Any, spec: Any) -> dict[str, Any] | None:
        if not config.next_action_tasks:
            return None
        from trainer.next_action import next_action_accuracy

        return next_action_accuracy(policy, eval_tasks[:config.next_action_tasks], spec=spec).to_json_dict()

    if config.eval_base:  # generation 0: the base model on the same tasks, the reference for every later one
        started = time.monotonic()
        spec = harness() if harness is not None else None
        check_stop(stop, "before scoring the base model")
        console.print(f"[bold]generation 0[/bold]: the base model {model.name}, untrained, on {', '.join(splits)}")
        policy = load_policy(model, max_new_tokens=config.max_completion_length, dtype=config.policy_dtype)
        found = evaluate(policy, f"base:{model.name}", None, spec)
        summaries.append(GenerationSummary(generation=0, stage="base", checkpoint_dir=model,
                                           checkpoint_id=f"base:{model.name}", seconds=time.monotonic() - started,
                                           train_metrics={}, evaluation=found["dev"], weak_templates=[],
                                           next_action=next_action_of(policy, spec), held_out=found.get("test")))
        del policy
    for generation in range(1, config.generations + 1):
        started = time.monotonic()
        target = out / f"gen{generation}"
        spec = harness() if harness is not None else None
        check_stop(stop, f"before generation {generation}")
        if (target / CHECKPOINT_FILE).exists():
            console.print(f"[bold]generation {generation}[/bold]: reusing the finished checkpoint in {target}")
            stage, metrics, groups, losses = _reused(target)
        elif generation == 1:
            console.print(f"[bold]generation 1[/bold]: SFT of {model.name} on {Path(snapshot_dir).name}")
            result = run_sft(model, snapshot_dir, target, SftConfig(
                max_steps=config.sft_steps or -1, epochs=config.sft_epochs, learning_rate=config.sft_lr,
                batch_size=config.sft_batch_size, max_length=config.sft_max_length, seed=config.seed,
                precision=config.sft_precision), run_id=run_id, stop=stop)
            stage, metrics, groups = "sft", result.metrics, []
            losses = result.template_losses
        else:
            console.print(f"[bold]generation {generation}[/bold]: GRPO+CARE from {model.name}")
            learnable = learnable_templates(summaries[-1].evaluation) if summaries else []
            tasks = _rl_tasks(config, weights, generation, config.rl_steps, learnable)
            rl = run_grpo(model, tasks, target, RlConfig(
                num_generations=config.num_generations, max_steps=config.rl_steps, learning_rate=config.rl_lr,
                max_completion_length=config.max_completion_length, max_tool_calls=config.max_tool_calls,
                gradient_checkpointing=config.rl_gradient_checkpointing, seed=config.seed + generation), run_id=run_id,
                environment_factory=functools.partial(PhoneEnvironment, spec=spec), stop=stop)
            stage, metrics, groups = "rl", {**rl.metrics, "learnable_templates": float(len(learnable))}, rl.groups
            losses = {}
        import json

        meta = json.loads((target / CHECKPOINT_FILE).read_text())
        saved = checkpoint_event(meta, target)
        emit(saved)
        for event in group_events(groups, run_id=run_id, causation_id=saved.event_id):
            emit(event)
        policy = load_policy(target, max_new_tokens=config.max_completion_length, dtype=config.policy_dtype)
        found = evaluate(policy, meta["checkpoint_id"], saved.event_id, spec)
        summary = found["dev"]
        next_action = next_action_of(policy, spec)
        # Feedback steers the next generation's data: from dev, never from the held-out test split.
        feedback = feedback_event(summary, run_id=run_id, causation_id=saved.event_id, losses=losses)
        emit(feedback)
        weights = feedback.template_weights
        summaries.append(GenerationSummary(generation=generation, stage=stage, checkpoint_dir=target,
                                           checkpoint_id=meta["checkpoint_id"],
                                           seconds=time.monotonic() - started, train_metrics=metrics,
                                           evaluation=summary, weak_templates=feedback.weak_templates,
                                           next_action=next_action, held_out=found.get("test")))
        if on_generation is not None:
            on_generation(summaries[-1])
        model = target
    console.print(summary_table(summaries))
    return summaries


def _reused(target: Path) -> tuple[str, dict[str, float], list[Any], dict[str, float]]:
    """(stage, metrics, groups, template losses) of a finished checkpoint a rerun reuses."""
    import json

    from trainer.sft import CHECKPOINT_FILE

    meta = json.loads((target / CHECKPOINT_FILE).read_text())
    return (str(meta.get("stage", "sft")), dict(meta.get("metrics") or {}), [],
            dict(meta.get("template_losses") or {}))


def score_text(e: EvalSummary | None) -> str:
    """An evaluation's overall score with its 95% interval, `0.329 [0.231, 0.452]` (— for none)."""
    return f"{e.overall:.3f} [{e.overall_ci[0]:.3f}, {e.overall_ci[1]:.3f}]" if e is not None else "—"


def summary_table(summaries: Sequence[GenerationSummary]) -> Table:
    held_out = any(s.held_out is not None for s in summaries)
    columns = ["gen", "stage", "checkpoint", "dev overall [95% CI]", "success"]
    columns += ["test overall [95% CI]", "test success"] if held_out else []
    table = Table(*columns, "next action", "valid", "out tok", "tool calls", "s", title="training generations")
    for s in summaries:
        e = s.evaluation
        guessed = f"{s.next_action['correct']}/{s.next_action['steps']}" if s.next_action else "—"
        test = [score_text(s.held_out), f"{s.held_out.success:.2f}" if s.held_out else "—"] if held_out else []
        table.add_row(str(s.generation), s.stage, s.checkpoint_id, score_text(e), f"{e.success:.2f}", *test,
                      guessed, f"{e.validity:.2f}", f"{e.mean_output_tokens:.1f}", f"{e.mean_tool_calls:.2f}",
                      f"{s.seconds:.0f}")
    return table


def plot_generations(summaries: Sequence[GenerationSummary], path: str | Path) -> Path:
    """Overall score with its 95% interval per generation (generation 0: the base model) on dev
    and, where scored, the held-out test split; validity beside them; as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gens = [s.generation for s in summaries]
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    series = [("dev", [s.evaluation for s in summaries], "o")]
    if any(s.held_out is not None for s in summaries):
        series.append(("test (held-out templates)", [s.held_out for s in summaries], "^"))
    for label, evals, marker in series:
        points = [(g, e) for g, e in zip(gens, evals, strict=True) if e is not None]
        ax.errorbar([g for g, _ in points], [e.overall for _, e in points],
                    yerr=[[e.overall - e.overall_ci[0] for _, e in points],
                          [e.overall_ci[1] - e.overall for _, e in points]],
                    marker=marker, capsize=3, label=f"{label} overall (95% CI)")
    ax.plot(gens, [s.evaluation.validity for s in summaries], marker="s", linestyle=":", label="valid answers")
    ax.set_xlabel("generation (0: base model)" if gens and gens[0] == 0 else "generation")
    ax.set_ylim(0, 1)
    ax.set_xticks(gens)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)
