"""SFT cold start: TRL's SFTTrainer on an approved snapshot, loss on the answer only, LoRA or full.

The prompt/completion pairs come from `trainer.data.render_examples`; by default
`trainer.data.pack_episodes` then joins an episode's steps into one sequence with the loss on every
step's answer (the header is computed once per episode, not once per step), handed to TRL
pre-tokenised with a `completion_mask`. With `pack_episodes=False`, TRL's completion-only loss on
prompt/completion pairs masks each row's prompt. The checkpoint directory holds a full model
(a LoRA adapter is merged) plus `flywheel_checkpoint.json`: the snapshot id and sha256, the base
model, the config and the git commit.
"""

from __future__ import annotations

import json
import logging
import subprocess
import threading
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from trainer.answer_positions import score_answer_positions
from trainer.data import RenderReport, pack_episodes, read_snapshot, render_examples
from trainer.precision import use_bf16
from trainer.stopping import train_resumably

__all__ = ["CHECKPOINT_FILE", "SftConfig", "TrainResult", "build_sft_trainer", "git_commit", "run_sft",
           "template_losses", "write_checkpoint_meta"]

# Per-template answer loss after SFT is measured on at most this many rows of each template.
LOSS_ROWS_PER_TEMPLATE = 2

logger = logging.getLogger(__name__)

CHECKPOINT_FILE = "flywheel_checkpoint.json"


@dataclass(frozen=True)
class SftConfig:
    """How SFT runs; every field's metadata says what it does (TRL's config style)."""

    method: Literal["full", "lora"] = field(default="full", metadata={"help": "Full fine-tuning or a LoRA adapter."})
    epochs: float = field(default=1.0, metadata={"help": "Passes over the snapshot."})
    max_steps: int = field(default=-1, metadata={"help": "Stop after this many optimiser steps (-1: epochs)."})
    learning_rate: float = field(default=5e-5, metadata={"help": "Peak learning rate (LoRA often wants 1e-4..1e-3)."})
    batch_size: int = field(default=4, metadata={"help": "Examples per device step."})
    grad_accum: int = field(default=1, metadata={"help": "Steps accumulated per optimiser step."})
    max_length: int = field(default=3072, metadata={
        "help": "Tokens per example; a longer row loses its oldest past steps (never the row). SmolLM2's "
                "longest header (a memory task showing every app) is 2,435 tokens."})
    lora_r: int = field(default=16, metadata={"help": "LoRA rank."})
    lora_alpha: int = field(default=32, metadata={"help": "LoRA alpha."})
    lora_dropout: float = field(default=0.0, metadata={"help": "LoRA dropout."})
    seed: int = field(default=0, metadata={"help": "Seed of data order and initialisation."})
    deepspeed: str | None = field(default=None, metadata={"help": "A DeepSpeed config (path) for ZeRO-2/3."})
    logging_steps: int = field(default=1, metadata={"help": "Log every this many steps."})
    pack_episodes: bool = field(default=True, metadata={
        "help": "Train an episode's steps as one sequence (loss on every answer) instead of one row per step."})
    precision: str = field(default="auto", metadata={
        "help": "auto (bf16 mixed precision where the GPU or CPU multiplies bf16 natively, else fp32), bf16 or fp32."})
    loss_rows_per_template: int = field(default=LOSS_ROWS_PER_TEMPLATE, metadata={
        "help": "Rows per template whose answer loss is measured after training, for feedback (0: none)."})


@dataclass(frozen=True)
class TrainResult:
    checkpoint_dir: Path
    checkpoint_id: str
    steps: int
    losses: list[float]
    train_tokens: int
    seconds: float
    metrics: dict[str, float]
    template_losses: dict[str, float] = field(default_factory=dict)

    @property
    def tokens_per_s(self) -> float:
        return self.train_tokens / self.seconds if self.seconds > 0 else 0.0


def git_commit() -> str:
    """The repository's HEAD commit, or 'unknown' outside a git checkout."""
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=False,
                              cwd=Path(__file__).parent, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def _base_name(model_dir: Path) -> str:
    for meta in (model_dir / CHECKPOINT_FILE, model_dir / "flywheel_model.json"):
        if meta.is_file():
            data = json.loads(meta.read_text())
            return str(data.get("base_model") or data.get("base") or model_dir.name)
    return model_dir.name


def _jsonable(value: Any) -> Any:
    """`value` with every mapping key a string (generation settings may key on token tuples)."""
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def write_checkpoint_meta(out: Path, **meta: Any) -> dict[str, Any]:
    """Writes flywheel_checkpoint.json: what the checkpoint is, what it was trained on and how."""
    (out / CHECKPOINT_FILE).write_text(json.dumps(_jsonable(meta), indent=2, default=str))
    return meta


def training_args_common(out: Path, *, seed: int, logging_steps: int, deepspeed: str | None,
                         gradient_checkpointing: bool = False, precision: str = "auto") -> dict[str, Any]:
    """The TrainingArguments every stage shares: bf16 mixed precision where the hardware has it
    (`trainer.precision`; DeepSpeed on a CPU stays fp32: transformers takes bf16 on a CPU only with
    `use_cpu`), no checkpointing of activations unless asked (GRPO on long prompts)."""
    import torch

    cuda = torch.cuda.is_available()
    bf16 = use_bf16(precision, cuda=cuda) and (cuda or deepspeed is None)
    return {"output_dir": str(out / "trainer_state"), "seed": seed, "logging_steps": logging_steps,
            "report_to": "none", "save_strategy": "no", "bf16": bf16,
            "use_cpu": not cuda and deepspeed is None,
            "gradient_checkpointing": gradient_checkpointing, "dataloader_num_workers": 0, "disable_tqdm": True,
            "deepspeed": deepspeed}


def quiet_progress(trainer: Any) -> None:
    """Sends the trainer's per-step log dicts to this module's logger (the run's log file)
    instead of printing them: with progress bars off, transformers prints each dict to stdout."""
    from transformers import PrinterCallback, TrainerCallback

    class LogToLogger(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
            if logs:
                logger.info("step %d: %s", state.global_step,
                            ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in logs.items()))

    trainer.remove_callback(PrinterCallback)
    trainer.add_callback(LogToLogger())


def build_sft_trainer(model_dir: str | Path, snapshot_dir: str | Path, out_dir: str | Path,
                      config: SftConfig | None = None) -> tuple[Any, Any, Any]:
    """(SFTTrainer, snapshot, skipped rows) ready to train; `run_sft` runs it and saves the checkpoint."""
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    from trainer.models import load_model

    config = config or SftConfig()
    snapshot = read_snapshot(snapshot_dir)
    score_answer_positions()  # the LM head runs on the answers' positions only (trainer.answer_positions)
    loaded = load_model(Path(model_dir))
    tokenizer = loaded.tokenizer
    tokenizer.padding_side = "right"
    report = RenderReport()
    examples, skipped = render_examples(snapshot, tokenizer, max_length=config.max_length, report=report)
    if not examples:
        raise ValueError(f"snapshot {snapshot.snapshot_id} has no valid prompt/completion rows to train on")
    rows: list[Any] = examples
    if config.pack_episodes:
        rows = pack_episodes(examples, tokenizer, report)
        longest = max(len(row["input_ids"]) for row in rows)
        if config.max_length is not None and longest > config.max_length:
            raise RuntimeError(f"a packed sequence has {longest} tokens, more than max_length={config.max_length}")
    peft_config = None
    if config.method == "lora":
        from peft import LoraConfig

        peft_config = LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout,
                                 target_modules="all-linear", task_type="CAUSAL_LM")
    args = SFTConfig(**training_args_common(Path(out_dir), seed=config.seed, logging_steps=config.logging_steps,
                                            deepspeed=config.deepspeed, precision=config.precision),
                     num_train_epochs=config.epochs, max_steps=config.max_steps,
                     learning_rate=config.learning_rate, per_device_train_batch_size=config.batch_size,
                     gradient_accumulation_steps=config.grad_accum, max_length=config.max_length,
                     completion_only_loss=True, packing=False, lr_scheduler_type="constant",
                     warmup_steps=0)
    trainer = SFTTrainer(model=loaded.model, args=args, train_dataset=Dataset.from_list(rows),
                         processing_class=tokenizer, peft_config=peft_config)
    quiet_progress(trainer)
    trainer.flywheel_render_report = report
    if len(trainer.train_dataset) != len(rows):  # TRL must not drop what the fitter kept
        raise RuntimeError(f"TRL kept {len(trainer.train_dataset)} of {len(rows)} sequences of snapshot "
                           f"{snapshot.snapshot_id}; every row should fit max_length={config.max_length}")
    return trainer, snapshot, skipped


def run_sft(model_dir: str | Path, snapshot_dir: str | Path, out_dir: str | Path,
            config: SftConfig | None = None, *, run_id: str | None = None,
            checkpoint_id: str | None = None, stop: threading.Event | None = None) -> TrainResult:
    """SFT of the model in `model_dir` on the snapshot in `snapshot_dir`; the checkpoint goes to `out_dir`.

    With `stop`, training ends at the next step once it is set, leaves a resumable checkpoint
    and raises TrainingStopped; a later call with the same `out_dir` resumes from that step."""
    config = config or SftConfig()
    model_dir, out = Path(model_dir), Path(out_dir)
    trainer, snapshot, skipped = build_sft_trainer(model_dir, snapshot_dir, out, config)
    tokenizer = trainer.processing_class
    dataset = trainer.train_dataset
    output, seconds = train_resumably(trainer, out, stop, "SFT")
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    tokens = _tokens_seen(trainer.state.log_history) or _count_tokens(dataset, trainer.state)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.padding_side = "left"
    if config.method == "lora" and not config.deepspeed:
        trainer.model.merge_and_unload().save_pretrained(out)  # a checkpoint is always a whole model
    else:
        trainer.save_model(str(out))  # gathers ZeRO-3 partitions before writing
    tokenizer.save_pretrained(out)
    losses_by_template = template_losses(trainer.model, tokenizer, snapshot,
                                         rows_per_template=config.loss_rows_per_template,
                                         max_length=config.max_length, bf16=bool(trainer.args.bf16))
    checkpoint_id = checkpoint_id or f"sft-{uuid.uuid4().hex[:12]}"
    metrics = {"train_loss": float(output.training_loss), "first_loss": losses[0] if losses else float("nan"),
               "last_loss": losses[-1] if losses else float("nan"), "skipped_rows": float(skipped),
               "examples": float(len(dataset)), "seconds": seconds,
               "tokens_per_s": tokens / seconds if seconds > 0 else 0.0,
               **trainer.flywheel_render_report.as_metrics()}
    epochs_run = float(trainer.state.epoch or 0.0)  # answers taught per second, packed or not
    metrics["rows_per_s"] = metrics["rows_used"] * epochs_run / seconds if seconds > 0 else 0.0
    metrics["zero_stage"] = float(trainer.accelerator.state.deepspeed_plugin.zero_stage
                                  if trainer.is_deepspeed_enabled else 0)
    write_checkpoint_meta(out, checkpoint_id=checkpoint_id, run_id=run_id or checkpoint_id, stage="sft",
                          step=trainer.state.global_step, snapshot_id=snapshot.snapshot_id,
                          snapshot_sha256=snapshot.sha256, base_model=_base_name(model_dir),
                          parent=str(model_dir), config=asdict(config), git_commit=git_commit(), metrics=metrics,
                          template_losses=losses_by_template)
    logger.info("SFT %s: %d steps, loss %.3f -> %.3f, %.0f tok/s", checkpoint_id, trainer.state.global_step,
                metrics["first_loss"], metrics["last_loss"], tokens / max(seconds, 1e-9))
    return TrainResult(checkpoint_dir=out, checkpoint_id=checkpoint_id, steps=trainer.state.global_step,
                       losses=losses, train_tokens=tokens, seconds=seconds, metrics=metrics,
                       template_losses=losses_by_template)


def template_losses(model: Any, tokenizer: Any, snapshot: Any, *,
                    rows_per_template: int = LOSS_ROWS_PER_TEMPLATE,
                    max_length: int | None = None, bf16: bool = False) -> dict[str, float]:
    """Mean answer-token loss of the trained model per template (a few rows each): the feedback's
    loss. The LM head runs on the answer's positions only (the prompt's logits are never used),
    under bf16 autocast when training ran in it."""
    import contextlib

    import torch

    if rows_per_template <= 0:
        return {}
    examples, _ = render_examples(snapshot, tokenizer, with_template=True, max_length=max_length)
    chosen: dict[str, list[dict[str, str]]] = {}
    for example in examples:
        bucket = chosen.setdefault(example["template"], [])
        if len(bucket) < rows_per_template:
            bucket.append(example)
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    precision = (torch.autocast(device_type=device.type, dtype=torch.bfloat16) if bf16
                 else contextlib.nullcontext())
    result = {}
    with torch.no_grad(), precision:
        for template, rows in chosen.items():
            values = []
            for row in rows:
                prompt = tokenizer(row["prompt"], add_special_tokens=False)["input_ids"]
                answer = tokenizer(row["completion"], add_special_tokens=False)["input_ids"]
                ids = torch.tensor([prompt + answer], device=device)
                # the logits at the last len(answer) + 1 positions; all but the last predict the answer
                logits = model(input_ids=ids, logits_to_keep=len(answer) + 1).logits[0, :-1].float()
                values.append(float(torch.nn.functional.cross_entropy(
                    logits, torch.tensor(answer, device=device))))
            result[template] = sum(values) / len(values)
    model.train(was_training)
    return result


def _tokens_seen(history: list[dict[str, Any]]) -> int:
    """The trainer's own count of tokens trained on (its `num_tokens` log), 0 when it has none."""
    counts = [entry["num_tokens"] for entry in history if "num_tokens" in entry]
    return int(counts[-1]) if counts else 0


def _count_tokens(dataset: Any, state: Any) -> int:
    """Tokens trained on when the trainer did not count them: the dataset's tokens times the epochs run."""
    per_epoch = sum(len(row["input_ids"]) for row in dataset)
    return int(per_epoch * (state.epoch or 1.0))
