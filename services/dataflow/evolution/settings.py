"""Settings of the harness evolver service (env prefix FLYWHEEL_EVOLVER_)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings

from schemas.settings import load_settings, settings_config
from services.dataflow.evolution.paired import DEFAULT_RESAMPLES, DEFAULT_TOLERANCE
from services.dataflow.evolution.propose import DEFAULT_MIN_SUPPORT

__all__ = ["MAX_VETO_WINDOW_S", "EvolverSettings", "load_evolver_settings"]

#: A promotion nobody looked at within 30 days is not waiting for a person any more.
MAX_VETO_WINDOW_S = 30 * 24 * 3600.0


class EvolverSettings(BaseSettings):
    """How much evidence a proposal needs, how the gate judges it, and what runs the gate."""

    model_config = settings_config("FLYWHEEL_EVOLVER_")

    min_support: int = Field(default=DEFAULT_MIN_SUPPORT, ge=1, le=1000,
                             description="Failures of one group before a proposal is made.")
    tolerance: float = Field(default=DEFAULT_TOLERANCE, ge=0.0, le=1.0,
                             description="Largest drop of any family's mean score the gate "
                                         "accepts (dev) and test may show before 'overfit'.")
    resamples: int = Field(default=DEFAULT_RESAMPLES, ge=100, le=100_000,
                           description="Paired-bootstrap resamples behind the 95% bound.")
    veto_window_s: float = Field(default=0.0, ge=0.0, le=MAX_VETO_WINDOW_S, allow_inf_nan=False,
                                 description="Seconds a passed proposal waits on the gate page "
                                             "for a veto before it is promoted (0: at once; "
                                             "at most 30 days).")
    gate_public_key: Path | None = Field(
        default=None, description="The gate's public key (PEM) that signs vetoes; default "
                                  "<data dir>/gate/signing_key.pub. Vetoes it did not sign "
                                  "are refused.")
    policy: str = Field(default="oracle", min_length=1,
                        description="Policy the gate runs both harnesses with: oracle, random, "
                                    "noop, or MODULE:CLASS.")
    evaluate: bool = Field(default=True, description="Run the gate in this service (off: an "
                                                     "external evaluator publishes "
                                                     "harness.evaluated).")
    n_per_template: int = Field(default=2, ge=1, le=100,
                                description="Seeded instances per template in each gate run.")
    suite_seed: int = Field(default=0, ge=0, description="Suite seed of the gate's instances.")
    proposer_model: Path | None = Field(
        default=None, description="Local model directory that also writes proposals (after "
                                  "the rules; they go through the same gate). Unset: rules only.")
    base_spec: Path | None = Field(default=None, description="Harness spec JSON to start from "
                                                             "when the registry is empty "
                                                             "(default: the built-in harness).")


def load_evolver_settings(**overrides: object) -> EvolverSettings:
    return load_settings(EvolverSettings, "evolver", **overrides)
