"""Settings of the trainer service (env prefix FLYWHEEL_TRAINER_)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings

from schemas.settings import load_settings, settings_config

__all__ = ["TrainerSettings", "load_trainer_settings"]

#: One poll waits at most this long, so a stop request is noticed quickly.
DEFAULT_POLL_TIMEOUT_MS = 500


class TrainerSettings(BaseSettings):
    """Which model the trainer starts from, where checkpoints go, and how big each stage is."""

    model_config = settings_config("FLYWHEEL_TRAINER_")

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


def load_trainer_settings(**overrides: object) -> TrainerSettings:
    return load_settings(TrainerSettings, "trainer", **overrides)
