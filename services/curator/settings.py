"""Settings of the curator service (env prefix FLYWHEEL_CURATOR_)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings

from schemas.settings import load_settings, settings_config

__all__ = ["CuratorSettings", "load_curator_settings"]


class CuratorSettings(BaseSettings):
    """When the curator writes a snapshot and where."""

    model_config = settings_config("FLYWHEEL_CURATOR_")

    snapshot_examples: int = Field(default=500, ge=1, description="A snapshot is written each "
                                   "time this many more admitted examples (rows) exist.")
    admission: Literal["auto", "gate"] = Field(
        default="auto", description="'auto': the stand-in admits every verified candidate (and "
        "says so in each manifest); 'gate': the review gate's policy and signed decisions "
        "(services.dataflow.gate_admission.GateAdmission).")
    correction_share: float = Field(
        default=0.2, ge=0.0, lt=1.0, description="Share of each snapshot's rows that are "
        "corrections (the oracle's continuation of an admitted failure from its first wrong "
        "step), at most: 0 leaves them out; fewer when too few are admitted.")
    snapshot_dir: Path | None = Field(default=None, description="Where snapshots go (default "
                                      "<FLYWHEEL_DATA_DIR>/snapshots).")

    def resolved_snapshot_dir(self, data_dir: Path) -> Path:
        return self.snapshot_dir if self.snapshot_dir is not None else data_dir / "snapshots"


def load_curator_settings(**overrides: object) -> CuratorSettings:
    return load_settings(CuratorSettings, "curator", **overrides)
