"""Settings of the gate service (env prefix FLYWHEEL_GATE_)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings

from schemas.settings import load_settings, settings_config

__all__ = ["DEFAULT_PORT", "GateSettings", "load_gate_settings"]

#: Next to the broker's 19092 and clear of the usual 8000/8080 development servers.
DEFAULT_PORT = 8765
#: κ and throughput are published this often when anything changed: a dashboard refresh rate.
DEFAULT_STATS_INTERVAL_S = 30.0
#: acks=all on loopback takes milliseconds; a decision not acknowledged in 10 s is reported
#: to the reviewer as not taken (it may be retried, the decision id makes it a no-op).
DEFAULT_PUBLISH_TIMEOUT_S = 10.0


class GateSettings(BaseSettings):
    """Where the gate listens and where its key, reviewer tokens and blobs live."""

    model_config = settings_config("FLYWHEEL_GATE_")

    host: str = Field(default="127.0.0.1", min_length=1,
                      description="Address to listen on; loopback unless reviewers are remote.")
    port: int = Field(default=DEFAULT_PORT, ge=0, le=65535,
                      description="Port to listen on; 0 picks a free one.")
    key_path: Path | None = Field(
        default=None, description="The Ed25519 signing key (PEM, mode 0600); default "
                                  "<data dir>/gate/signing_key.pem. Without it the gate refuses "
                                  "to start.")
    reviewers_path: Path | None = Field(
        default=None, description="Reviewer token hashes (JSON); default "
                                  "<data dir>/gate/reviewers.json.")
    blob_dir: Path | None = Field(
        default=None, description="The blob store with screenshots; default <data dir>/blobs.")
    stats_interval_s: float = Field(
        default=DEFAULT_STATS_INTERVAL_S, gt=0,
        description="Seconds between review.stats_reported events.")
    publish_timeout_s: float = Field(
        default=DEFAULT_PUBLISH_TIMEOUT_S, gt=0,
        description="Seconds a decision may take to be acknowledged by the broker.")
    gold_items: int = Field(
        default=0, ge=0, le=500,
        description="Seeded gold items (known right answer) mixed into the queue, one after every "
                    "10 real requests, to score reviewers (services.gate.gold); 0: none.")

    def resolved_key_path(self, data_dir: Path) -> Path:
        return self.key_path or Path(data_dir) / "gate" / "signing_key.pem"

    def resolved_reviewers_path(self, data_dir: Path) -> Path:
        return self.reviewers_path or Path(data_dir) / "gate" / "reviewers.json"

    def resolved_blob_dir(self, data_dir: Path) -> Path:
        return self.blob_dir or Path(data_dir) / "blobs"


def load_gate_settings(**overrides: object) -> GateSettings:
    return load_settings(GateSettings, "gate", **overrides)
