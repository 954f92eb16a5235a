"""Settings of the rollout service (env prefix FLYWHEEL_ROLLOUT_)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from schemas.settings import load_settings

__all__ = ["RolloutSettings", "load_rollout_settings"]


class RolloutSettings(BaseSettings):
    """Which policy runs, on how many simulated phones, and how long a call may take."""

    model_config = SettingsConfigDict(env_prefix="FLYWHEEL_ROLLOUT_", frozen=True,
                                      extra="ignore")

    policy: str = Field(default="oracle", min_length=1,
                        description="oracle, random, noop, or MODULE:CLASS of a policy class.")
    concurrency: int = Field(default=4, ge=1, le=256,
                             description="Episodes run at once (one simulated phone each).")
    call_timeout_s: float = Field(default=30.0, ge=0, description="A policy or device call "
                                  "taking longer ends its episode as 'timeout' (0: no limit).")
    group_id: str = Field(default="rollout", min_length=1, description="Consumer group.")
    poll_timeout_ms: int = Field(default=200, ge=1, le=60_000,
                                 description="Longest wait of one poll for tasks.")
    max_batch: int = Field(default=64, ge=1, description="Tasks taken per poll.")
    suite_seed: int = Field(default=0, ge=0, description="Regenerates tasks sent without an "
                                                         "embedded instance.")
    harness: str = Field(default="default", min_length=1,
                         description="Harness version recorded on every episode.")


def load_rollout_settings(**overrides: object) -> RolloutSettings:
    return load_settings(RolloutSettings, "rollout", **overrides)
