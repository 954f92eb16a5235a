"""Settings of the evaluator service (env prefix FLYWHEEL_EVALUATOR_)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings

from schemas.settings import load_settings, settings_config

__all__ = ["EvaluatorSettings", "load_evaluator_settings"]

#: One poll waits at most this long, so a stop request is noticed quickly.
DEFAULT_POLL_TIMEOUT_MS = 500


class EvaluatorSettings(BaseSettings):
    """Which split the evaluator runs on each checkpoint or harness version, and how much of it."""

    model_config = settings_config("FLYWHEEL_EVALUATOR_")

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


def load_evaluator_settings(**overrides: object) -> EvaluatorSettings:
    return load_settings(EvaluatorSettings, "evaluator", **overrides)
