"""Settings of the trainer and evaluator services (env prefixes FLYWHEEL_TRAINER_, FLYWHEEL_EVALUATOR_)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from schemas.settings import load_settings

__all__ = ["EvaluatorSettings", "TrainerSettings", "load_evaluator_settings", "load_trainer_settings"]

#: One poll waits at most this long, so a stop request is noticed quickly.
DEFAULT_POLL_TIMEOUT_MS = 500


class TrainerSettings(BaseSettings):
    """Which model the trainer starts from, where checkpoints go, and how big each stage is."""

    model_config = SettingsConfigDict(env_prefix="FLYWHEEL_TRAINER_", frozen=True, extra="ignore")

    base_model: Path = Field(default=Path("var/models/smollm2-135m"),
                             description="Model directory the first SFT starts from.")
    checkpoints_dir: Path = Field(default=Path("var/checkpoints"),
                                  description="Checkpoints go to <dir>/<checkpoint_id>; the evaluator reads them there.")
    group_id: str = Field(default="trainer", min_length=1, description="Consumer group of the trainer.")
    sft_method: str = Field(default="full", pattern="^(full|lora)$", description="full or lora.")
    sft_epochs: float = Field(default=1.0, gt=0, description="Passes over each SFT snapshot.")
    sft_max_steps: int = Field(default=-1, ge=-1, description="Cap on SFT steps (-1: epochs).")
    sft_learning_rate: float = Field(default=5e-5, gt=0, description="SFT learning rate.")
    sft_max_length: int = Field(default=4096, ge=64, description="Tokens per SFT example; a longer row "
                                "loses its oldest steps, never the row.")
    rl_steps: int = Field(default=4, ge=0, description="GRPO+CARE steps after each SFT (0: none).")
    rl_group: int = Field(default=4, ge=2, description="G, rollouts per GRPO group.")
    rl_max_completion_length: int = Field(default=192, ge=8, description="Tokens per rollout.")
    rl_max_tool_calls: int = Field(default=4, ge=1, description="Actions per rollout.")
    poll_timeout_ms: int = Field(default=DEFAULT_POLL_TIMEOUT_MS, ge=10, description="Longest wait of one poll.")


class EvaluatorSettings(BaseSettings):
    """Which split the evaluator runs on each checkpoint or harness version, and how much of it."""

    model_config = SettingsConfigDict(env_prefix="FLYWHEEL_EVALUATOR_", frozen=True, extra="ignore")

    checkpoints_dir: Path = Field(default=Path("var/checkpoints"), description="Where the trainer writes checkpoints.")
    harness_dir: Path = Field(default=Path("var/harness"), description=(
        "The harness registry: a checkpoint is scored in its current harness, a promoted version in itself."))
    batch_size: int = Field(default=16, ge=1, description="Episodes decoded together.")
    group_id: str = Field(default="evaluator", min_length=1, description="Consumer group of the evaluator.")
    split: str = Field(default="dev", pattern="^(dev|test)$", description="dev or test.")
    n_per_template: int = Field(default=1, ge=1, description="Instances per template.")
    max_steps: int = Field(default=10, ge=1, description="Steps per episode.")
    limit: int | None = Field(default=None, ge=1, description="Only the first N tasks (quick runs).")
    suite_seed: int = Field(default=0, ge=0, description="Suite seed.")
    poll_timeout_ms: int = Field(default=DEFAULT_POLL_TIMEOUT_MS, ge=10, description="Longest wait of one poll.")


def load_trainer_settings(**overrides: object) -> TrainerSettings:
    return load_settings(TrainerSettings, "trainer", **overrides)


def load_evaluator_settings(**overrides: object) -> EvaluatorSettings:
    return load_settings(EvaluatorSettings, "evaluator", **overrides)
