"""Settings of the generator service (env prefix FLYWHEEL_GENERATOR_)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode

from devices.suite.template import Tier
from schemas.settings import load_settings, settings_config

__all__ = ["GeneratorSettings", "load_generator_settings"]


class GeneratorSettings(BaseSettings):
    """How many tasks are kept open, how many in all, and how often tasks are constructed."""

    model_config = settings_config("FLYWHEEL_GENERATOR_")

    # The loop is latency-bound (each hop waits for a fetch and a batch): bench/loop.py
    # measured 47 episodes/s with 32 open tasks and 69 with 128 on 2 cores.
    queue_depth: int = Field(default=128, ge=1, le=10_000, description="Tasks kept open "
                             "(proposed, no verdict yet): enough to keep every rollout busy.")
    max_tasks: int | None = Field(default=None, ge=0, description="Stop proposing after this "
                                  "many tasks (unset: no limit).")
    compose_every: int = Field(default=7, ge=0, description="Every n-th task composes two "
                               "templates (0: never).")
    rephrase_every: int = Field(default=5, ge=0, description="Every n-th task rephrases its "
                                "goal (0: never).")
    suite_seed: int = Field(default=0, ge=0, description="Seeds every instance.")
    oracle_check: bool = Field(default=True, description="Play the oracle on each task before "
                               "proposing it; false where the rollout plays the oracle itself (its "
                               "episode, judged by the verifier, is the check; the generator then "
                               "checks only that the start state loads and is not already solved).")
    rephrase_model: Path | None = Field(default=None, description="A local causal LM "
                                        "directory that rephrases goals (unset: rule-based).")
    generator_id: str = Field(default="generator", min_length=1,
                              description="Names this generator in mix.shifted events.")
    tiers: Annotated[tuple[Tier, ...], NoDecode] = Field(default=(), description="Draw only templates of these tiers "
                                    "(comma list, e.g. easy; empty: every tier). Composition makes a "
                                    "harder task, so a tier filter without hard composes nothing.")

    @field_validator("tiers", mode="before")
    @classmethod
    def _comma_list(cls, value: object) -> object:
        return tuple(part.strip() for part in value.split(",") if part.strip()) if isinstance(value, str) else value


def load_generator_settings(**overrides: object) -> GeneratorSettings:
    return load_settings(GeneratorSettings, "generator", **overrides)
