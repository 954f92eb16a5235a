"""Online agentic RL: TRL's GRPOTrainer over SimPhone environments, with CARE's advantage the one used.

`CareGRPOTrainer` lets TRL generate multi-turn rollouts through `environment_factory` (each
environment's public methods are the planner's actions) and score them with the environment's
`get_reward`, then replaces the advantages TRL computed (its `scale_rewards` normalisation) with
CARE's, computed per group from each rollout's checker outcome (success, progress) and its cost
(output tokens + tool calls). `compute_loss` consumes `output["advantages"]`, so CARE's are
the ones the policy gradient uses. Each group's result is kept for the trainer service to publish.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from trainer.care import REGIMES, CareConfig, CareController, care_group, efficiency_cost

__all__ = ["GroupRecord", "RlConfig", "RlResult", "care_trainer_class", "run_grpo", "zero_variance"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RlConfig:
    """How GRPO+CARE runs; every field's metadata says what it does."""

    num_generations: int = field(default=4, metadata={"help": "G: rollouts per task (a group)."})
    tasks_per_step: int = field(default=1, metadata={"help": "Groups (tasks) per optimiser step."})
    max_steps: int = field(default=3, metadata={"help": "Optimiser steps."})
    learning_rate: float = field(default=1e-5, metadata={"help": "Learning rate."})
    max_completion_length: int = field(default=128, metadata={"help": "Tokens per rollout, tool replies included."})
    max_tool_calls: int = field(default=4, metadata={"help": "Actions per rollout (TRL's tool-calling iterations)."})
    temperature: float = field(default=1.0, metadata={"help": "Sampling temperature of rollouts."})
    beta: float = field(default=0.0, metadata={"help": "KL weight (0: no reference model, half the memory)."})
    care: bool = field(default=True, metadata={"help": "Use CARE's reward and advantage (False: plain GRPO)."})
    adapt_thresholds: bool = field(default=True, metadata={"help": "Let the bounded controller move p_low/p_high."})
    p_low: float = field(default=0.25, metadata={"help": "CARE's progress-regime threshold."})
    p_high: float = field(default=0.9, metadata={"help": "CARE's efficiency-regime threshold."})
    lambda_prog: float = field(default=0.5, metadata={"help": "CARE's progress weight."})
    lambda_eff: float = field(default=0.2, metadata={"help": "CARE's efficiency weight."})
    seed: int = field(default=0, metadata={"help": "Seed."})
    deepspeed: str | None = field(default=None, metadata={"help": "A DeepSpeed config (path) for ZeRO-2/3."})
    precision: str = field(default="auto", metadata={
        "help": "auto (bf16 mixed precision where the GPU or CPU multiplies bf16 natively, else fp32), bf16 or fp32."})
    gradient_checkpointing: bool = field(default=False, metadata={
        "help": "Recompute activations in the backward pass: a CPU's attention keeps a G × L × L matrix per "
                "layer, and G=4 SmolLM2 rollouts of ~2,800 tokens outgrew 24 GB without it (7.7 GB with it)."})
    max_seconds: float | None = field(default=None, metadata={
        "help": "Stop after the optimiser step that passes this many seconds (None: run max_steps)."})
    generation_kwargs: dict[str, Any] | None = field(default=None, metadata={
        "help": "Extra GenerationConfig fields for rollouts (e.g. top_k, repetition_penalty)."})


@dataclass(frozen=True)
class GroupRecord:
    """One group of G rollouts of one task: what CARE saw and decided."""

    step: int
    task_id: str
    template: str
    family: str
    regime: str
    success_rate: float
    success: tuple[float, ...]
    progress: tuple[float, ...]
    efficiency: tuple[float, ...]
    output_tokens: tuple[int, ...]
    tool_calls: tuple[int, ...]
    rewards: tuple[float, ...]
    advantages: tuple[float, ...]
    trl_advantages: tuple[float, ...]
    dropped: bool = False  # every reward equal: no signal, so its rollouts were masked out of the loss


def _trainer_class() -> type:
    from trl import GRPOTrainer

    class CareGRPOTrainer(GRPOTrainer):
        """GRPOTrainer whose advantages are CARE's (or plain per-group GRPO's with care=False)."""

        def __init__(self, *args: Any, care_config: CareConfig | None = None, use_care: bool = True,
                     controller: CareController | None = None, max_tool_calls: int = 4, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.use_care = use_care
            self.care_controller = controller or CareController(config=care_config or CareConfig())
            self.adapt = controller is not None
            self.care_config = self.care_controller.config
            self.max_tool_calls = max_tool_calls
            self.group_records: list[GroupRecord] = []
            self.regime_counts: Counter[str] = Counter()

        def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
            import torch
            from accelerate.utils import gather_object

            output = super()._generate_and_score_completions(inputs)
            environments = list(self.environments)
            mask = output["completion_mask"]
            if output.get("tool_mask") is not None:
                mask = mask * output["tool_mask"]
            local_tokens = mask.sum(dim=1).tolist()
            if len(environments) != len(local_tokens):
                raise RuntimeError(f"CARE needs one environment per rollout; got {len(environments)} for "
                                   f"{len(local_tokens)} rollouts")
            # Groups may span processes (TRL gathers rewards before normalising): gather what CARE needs.
            local = [(env.scored.success, env.scored.progress, float(t), float(env.actions))
                     for env, t in zip(environments, local_tokens, strict=True)]
            device = output["advantages"].device
            rows = self.accelerator.gather(torch.tensor(local, dtype=torch.float32, device=device)).tolist()
            tasks = gather_object([env.task for env in environments])
            size = self.num_generations
            if len(rows) % size:
                raise RuntimeError(f"CARE needs whole groups; got {len(rows)} rollouts for G={size}")
            trl_advantages = self.accelerator.gather(output["advantages"]).tolist()
            advantages: list[float] = []
            dropped_rows: list[int] = []
            step_records = []
            for start in range(0, len(rows), size):
                group = rows[start:start + size]
                success = [r[0] for r in group]
                progress = [r[1] for r in group]
                toks = [int(r[2]) for r in group]
                calls = [int(r[3]) for r in group]
                eff = [efficiency_cost(t, c, max_tokens=self.max_completion_length, max_tool_calls=self.max_tool_calls)
                       for t, c in zip(toks, calls, strict=True)]
                if self.use_care:
                    result = care_group(success, progress, eff, self.care_config)
                else:  # plain GRPO on the checker's success, per-group normalised like TRL's "group" scaling
                    result = care_group(success, [0.0] * size, [0.0] * size,
                                        CareConfig(p_low=0.0, p_high=1.0, eps=self.care_config.eps))
                dropped = zero_variance(result.rewards)
                if dropped:
                    dropped_rows.extend(range(start, start + size))
                advantages.extend(0.0 if dropped else a for a in result.advantages)
                task = tasks[start]
                record = GroupRecord(
                    step=self.state.global_step, task_id=task.task_id, template=task.template, family=task.family,
                    regime=result.regime if self.use_care else "grpo", success_rate=result.success_rate,
                    success=tuple(success), progress=tuple(progress), efficiency=tuple(eff),
                    output_tokens=tuple(toks), tool_calls=tuple(calls), rewards=result.rewards,
                    advantages=result.advantages, trl_advantages=tuple(trl_advantages[start:start + size]),
                    dropped=dropped)
                step_records.append(result)
                self.group_records.append(record)
            counts = Counter(r.regime for r in step_records)
            self.regime_counts.update(counts)
            mode = "train" if self.model.training else "eval"
            for regime in REGIMES:
                self._metrics[mode][f"care/{regime}_groups"].append(float(counts.get(regime, 0)))
            self._metrics[mode]["care/dropped_groups"].append(float(len(dropped_rows) // size))
            self._metrics[mode]["care/p_low"].append(self.care_config.p_low)
            self._metrics[mode]["care/p_high"].append(self.care_config.p_high)
            logger.info("step %d CARE regimes %s", self.state.global_step, dict(counts))
            if self.use_care and self.adapt:
                self.care_config = self.care_controller.observe(step_records)
            first = self.accelerator.process_index * len(local)  # this process's rollouts, as TRL slices them
            output["advantages"] = torch.tensor(advantages[first:first + len(local)],
                                                dtype=output["advantages"].dtype, device=device)
            mine = [row - first for row in dropped_rows if first <= row < first + len(local)]
            if mine:  # a zero-variance group is never trained on: no policy gradient, no KL pull either
                output["completion_mask"] = output["completion_mask"].clone()
                output["completion_mask"][mine] = 0
            if "num_items_in_batch" in output:  # the loss's token count, without the dropped rows
                kept = output["completion_mask"] if output.get("tool_mask") is None \
                    else output["completion_mask"] * output["tool_mask"]
                output["num_items_in_batch"] = self.accelerator.gather(kept.sum()).sum()
            return output

    return CareGRPOTrainer


def zero_variance(rewards: Sequence[float], tol: float = 1e-9) -> bool:
    """Whether a group's rewards are all equal (all failed, all solved with equal cost, ...): its
    advantages carry no signal, so GRPO drops the group instead of training on it."""
    return max(rewards) - min(rewards) <= tol if rewards else True


def care_trainer_class() -> type:
    """CareGRPOTrainer, built on first use (importing TRL takes seconds)."""
    global _CARE_TRAINER
    if _CARE_TRAINER is None:
        _CARE_TRAINER = _trainer_class()
    return _CARE_TRAINER


_CARE_TRAINER: type | None = None


@dataclass(frozen=True)
class RlResult:
    checkpoint_dir: Path
    checkpoint_id: str
    steps: int
    seconds: float
    groups: list[GroupRecord]
    regime_counts: dict[str, int]
    metrics: dict[str, float]

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else 0.0


def run_grpo(model_dir: str | Path, tasks: Sequence[Any], out_dir: str | Path, config: RlConfig | None = None,
             *, run_id: str | None = None, environment_factory: Callable[[], Any] | None = None,
             trainer_class: type | None = None, snapshot_id: str = "online",
             checkpoint_id: str | None = None, stop: threading.Event | None = None) -> RlResult:
    """GRPO (+CARE) of the model in `model_dir` on SimPhone episodes of `tasks`; saves to `out_dir`.

    `stop` as in `trainer.sft.run_sft`: ends at the next step, resumable from `out_dir`."""
    from datasets import Dataset
    from trl import GRPOConfig

    from trainer.envs import environment_factory as default_factory
    from trainer.envs import task_row
    from trainer.models import load_model
    from trainer.sft import (
        _base_name,
        git_commit,
        quiet_progress,
        training_args_common,
        write_checkpoint_meta,
    )
    from trainer.stopping import train_resumably

    config = config or RlConfig()
    model_dir, out = Path(model_dir), Path(out_dir)
    loaded = load_model(model_dir)
    rows = [task_row(t) for t in tasks]
    needed = config.max_steps * config.tasks_per_step
    dataset = Dataset.from_list([rows[i % len(rows)] for i in range(max(needed, len(rows)))])
    batch = config.num_generations * config.tasks_per_step
    args = GRPOConfig(**training_args_common(out, seed=config.seed, logging_steps=1, deepspeed=config.deepspeed,
                                             gradient_checkpointing=config.gradient_checkpointing,
                                             precision=config.precision),
                      learning_rate=config.learning_rate, max_steps=config.max_steps,
                      per_device_train_batch_size=batch, num_generations=config.num_generations,
                      max_completion_length=config.max_completion_length,
                      max_tool_calling_iterations=config.max_tool_calls, temperature=config.temperature,
                      beta=config.beta, scale_rewards="group", shuffle_dataset=False,
                      generation_kwargs=config.generation_kwargs,
                      lr_scheduler_type="constant", warmup_steps=0)
    cls = trainer_class or care_trainer_class()
    care_config = CareConfig(p_low=config.p_low, p_high=config.p_high, lambda_prog=config.lambda_prog,
                             lambda_eff=config.lambda_eff)
    controller = CareController(config=care_config) if config.adapt_thresholds else None
    trainer = cls(model=loaded.model, args=args, train_dataset=dataset, processing_class=loaded.tokenizer,
                  environment_factory=environment_factory or default_factory, care_config=care_config,
                  use_care=config.care, controller=controller, max_tool_calls=config.max_tool_calls)
    quiet_progress(trainer)
    if config.max_seconds is not None:
        trainer.add_callback(_time_limit(config.max_seconds))
    _, seconds = train_resumably(trainer, out, stop, "GRPO")
    out.mkdir(parents=True, exist_ok=True)
    trainer.save_model(str(out))  # gathers ZeRO-3 partitions before writing
    loaded.tokenizer.save_pretrained(out)
    groups = list(trainer.group_records)
    rollouts = [s for g in groups for s in g.success]
    metrics = {"success": sum(rollouts) / len(rollouts) if rollouts else 0.0,
               "mean_output_tokens": _mean([t for g in groups for t in g.output_tokens]),
               "mean_tool_calls": _mean([c for g in groups for c in g.tool_calls]),
               "seconds": seconds, "steps_per_s": trainer.state.global_step / seconds if seconds else 0.0,
               "groups": float(len(groups)), "dropped_groups": float(sum(g.dropped for g in groups))}
    metrics["zero_stage"] = float(trainer.accelerator.state.deepspeed_plugin.zero_stage
                                  if trainer.is_deepspeed_enabled else 0)
    checkpoint_id = checkpoint_id or f"rl-{uuid.uuid4().hex[:12]}"
    write_checkpoint_meta(out, checkpoint_id=checkpoint_id, run_id=run_id or checkpoint_id, stage="rl",
                          step=trainer.state.global_step, snapshot_id=snapshot_id, snapshot_sha256=None,
                          base_model=_base_name(model_dir), parent=str(model_dir), config=asdict(config),
                          git_commit=git_commit(), metrics=metrics,
                          regime_counts=dict(trainer.regime_counts))
    return RlResult(checkpoint_dir=out, checkpoint_id=checkpoint_id, steps=trainer.state.global_step,
                    seconds=seconds, groups=groups, regime_counts=dict(trainer.regime_counts), metrics=metrics)


def _time_limit(seconds: float) -> Any:
    """A TrainerCallback that ends training after the step that passes `seconds` of wall clock."""
    from transformers import TrainerCallback

    class TimeLimit(TrainerCallback):
        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.started = time.monotonic()

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if time.monotonic() - self.started >= seconds:
                logger.info("GRPO stops at step %d: its %.0f s are up", state.global_step, seconds)
                control.should_training_stop = True

    return TimeLimit()


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
