"""Settings of the task suite (env prefix FLYWHEEL_SUITE_)."""

from __future__ import annotations

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["SuiteConfigError", "SuiteSettings", "load_settings"]


class SuiteSettings(BaseSettings):
    """How the suite generates and evaluates instances unless a command says otherwise."""

    model_config = SettingsConfigDict(env_prefix="FLYWHEEL_SUITE_", frozen=True, extra="ignore")

    suite_seed: int = Field(default=0, ge=0,
                            description="Suite seed; with template and index it fixes every instance.")
    n_per_template: int = Field(default=3, ge=1, le=1000,
                                description="Instances per template in an evaluation run.")
    random_seed: int = Field(default=0, ge=0,
                             description="Seed of the random policy's own generator.")


class SuiteConfigError(ValueError):
    """A FLYWHEEL_SUITE_* variable holds a bad value."""


def load_settings() -> SuiteSettings:
    """Reads SuiteSettings, turning a validation error into one sentence naming the field."""
    try:
        return SuiteSettings()
    except ValidationError as exc:
        err = exc.errors()[0]
        field = str(err["loc"][0]) if err["loc"] else "?"
        raise SuiteConfigError(
            f"FLYWHEEL_SUITE_{field.upper()} is invalid ({err['msg']}); fix or unset it."
        ) from None
