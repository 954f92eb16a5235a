"""Settings of the curator service (env prefix FLYWHEEL_CURATOR_)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from schemas.settings import load_settings

__all__ = ["CuratorSettings", "load_curator_settings"]


class CuratorSettings(BaseSettings):
    """When the curator writes a snapshot and where."""

    model_config = SettingsConfigDict(env_prefix="FLYWHEEL_CURATOR_", frozen=True,
                                      extra="ignore")

    snapshot_examples: int = Field(default=500, ge=1, description="A snapshot is written each "
                                   "time this many more admitted examples (rows) exist.")
    snapshot_dir: Path | None = Field(default=None, description="Where snapshots go (default "
                                      "<FLYWHEEL_DATA_DIR>/snapshots).")

    def resolved_snapshot_dir(self, data_dir: Path) -> Path:
        return self.snapshot_dir if self.snapshot_dir is not None else data_dir / "snapshots"


def load_curator_settings(**overrides: object) -> CuratorSettings:
    return load_settings(CuratorSettings, "curator", **overrides)
