"""Settings for the simulated phone (env prefix FLYWHEEL_SIM_)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings

from devices.sim.world import WORLD_SEED
from schemas.settings import load_settings as load_sim_settings
from schemas.settings import settings_config

__all__ = ["SimSettings", "load_settings"]


class SimSettings(BaseSettings):
    """How a SimPhone behaves when built with SimPhone.from_settings()."""

    model_config = settings_config("FLYWHEEL_SIM_", extra="forbid")

    step_ms: int = Field(default=1_000, ge=1, le=600_000,
                         description="Device-clock milliseconds each action advances.")
    fault_rate: float = Field(default=0.0, ge=0.0, le=1.0,
                              description="Probability that one action meets an injected fault.")
    fault_seed: int | None = Field(default=None, ge=0,
                                   description="Seed of the fault generator; None uses the task's seed.")
    world_seed: int = Field(default=WORLD_SEED, ge=0,
                            description="Seed of the default world (people, places, products).")


def load_settings() -> SimSettings:
    """SimSettings from the environment; a bad value raises SettingsError naming its variable."""
    return load_sim_settings(SimSettings, "sim")
