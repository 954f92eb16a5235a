"""Settings for the simulated phone (env prefix FLYWHEEL_SIM_)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from devices.sim.world import WORLD_SEED

__all__ = ["SimSettings"]


class SimSettings(BaseSettings):
    """How a SimPhone behaves; constructor arguments of SimPhone override nothing here implicitly."""

    model_config = SettingsConfigDict(env_prefix="FLYWHEEL_SIM_", frozen=True, extra="forbid")

    step_ms: int = Field(default=1_000, ge=1, le=600_000,
                         description="Device-clock milliseconds each action advances.")
    fault_rate: float = Field(default=0.0, ge=0.0, le=1.0,
                              description="Probability that one action meets an injected fault.")
    fault_seed: int | None = Field(default=None, ge=0,
                                   description="Seed of the fault generator; None uses the task's seed.")
    world_seed: int = Field(default=WORLD_SEED, ge=0,
                            description="Seed of the default world (people, places, products).")
