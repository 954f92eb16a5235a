"""Settings of the task suite (env prefix FLYWHEEL_SUITE_)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings

from schemas.settings import load_settings as load_env_settings
from schemas.settings import settings_config

__all__ = ["SuiteSettings", "load_settings"]


class SuiteSettings(BaseSettings):
    """How the suite generates and evaluates instances unless a command says otherwise."""

    model_config = settings_config("FLYWHEEL_SUITE_")

    suite_seed: int = Field(default=0, ge=0,
                            description="Suite seed; with template and index it fixes every instance.")
    n_per_template: int = Field(default=3, ge=1, le=1000,
                                description="Instances per template in an evaluation run.")
    random_seed: int = Field(default=0, ge=0,
                             description="Seed of the random policy's own generator.")


def load_settings() -> SuiteSettings:
    """SuiteSettings from the environment; a bad value raises SettingsError naming its variable."""
    return load_env_settings(SuiteSettings, "suite")
