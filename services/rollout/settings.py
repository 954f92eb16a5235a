"""Settings of the rollout service (env prefix FLYWHEEL_ROLLOUT_)."""

from __future__ import annotations

import re

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings

from schemas.settings import load_settings, settings_config
from services.dataflow.ids import expand_device_ids

__all__ = ["RolloutSettings", "load_rollout_settings"]

_DEVICE_ID = re.compile(r"^[A-Za-z0-9._:-]+$")


class RolloutSettings(BaseSettings):
    """Which policy runs, on how many simulated phones, and how long a call may take."""

    model_config = settings_config("FLYWHEEL_ROLLOUT_")

    policy: str = Field(default="oracle", min_length=1,
                        description="oracle, random, noop, or MODULE:CLASS of a policy class.")
    recovery: float = Field(default=0.0, ge=0, le=1, description="Share of oracle episodes "
                            "that first play one slip the phone refuses (a wrong id or verb), "
                            "then the oracle's way on: recovery rows; the slip is never a row.")
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
    devices: str = Field(default="", description="Comma-separated device ids whose runners "
                         "serve the episodes over flywheel.actions / flywheel.observations "
                         "(e.g. 'sim-0,sim-1', or real phones' ids), one episode at a time "
                         "each; 'ID*N' names the N phones of a runner serving N sim phones "
                         "('sim-0*32' is sim-0-0 … sim-0-31); empty: in-process SimPhones "
                         "(`concurrency` of them).")
    device_timeout_s: float = Field(default=10.0, gt=0, le=3600, description="A remote device "
                                    "request unanswered this long ends its episode as "
                                    "device_failed.")

    @field_validator("devices")
    @classmethod
    def _device_list(cls, value: str) -> str:
        entries = [part.strip() for part in value.split(",")] if value.strip() else []
        ids = expand_device_ids(entries)
        for device_id in ids:
            if not _DEVICE_ID.match(device_id):
                raise ValueError(f"device id {device_id!r} is not a device id (letters, digits "
                                 f"and . _ : - only); list ids like 'sim-0,sim-1'")
        if len(set(ids)) != len(ids):
            raise ValueError(f"device ids repeat in {value!r}; name each device once")
        return ",".join(entries)

    @property
    def device_ids(self) -> list[str]:
        """The remote devices, in order ('ID*N' expanded); empty for in-process rollouts."""
        return expand_device_ids(self.devices.split(",")) if self.devices else []


def load_rollout_settings(**overrides: object) -> RolloutSettings:
    return load_settings(RolloutSettings, "rollout", **overrides)
