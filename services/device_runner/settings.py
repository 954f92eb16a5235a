"""Settings of the device runner service (env prefix FLYWHEEL_DEVICE_RUNNER_)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_settings import BaseSettings

from schemas.settings import load_settings, settings_config
from services.dataflow.ids import phone_ids

__all__ = [
    "DEFAULT_ACTION_TIMEOUT_S",
    "DEFAULT_GROUP_ID",
    "DEFAULT_POLL_TIMEOUT_MS",
    "DEFAULT_SIM_DEVICES",
    "DEFAULT_STALE_AFTER_S",
    "DeviceRunnerSettings",
    "load_device_runner_settings",
]

#: Runner offsets of device D are committed as group "<prefix>.D": each runner assigns itself
#: the one partition its device's actions hash to, and two devices may share a partition.
DEFAULT_GROUP_ID = "device-runners"
#: Actions older than this when first read belong to episodes whose rollout gave up long ago.
DEFAULT_STALE_AFTER_S = 600.0
#: One poll waits at most this long, so Ctrl-C and the status line are checked often.
DEFAULT_POLL_TIMEOUT_MS = 200
#: A sim step takes microseconds and an adb step a few seconds; a minute means the device hangs.
DEFAULT_ACTION_TIMEOUT_S = 60.0
#: Sixteen simulated phones, served by one runner thread in `flywheel run`: on 2 cores the data
#: loop through them played 17-21 episodes/s against ~13 with four (bench/loop.py, 1,500
#: examples), since a step's round trip over the topics is mostly waiting.
DEFAULT_SIM_DEVICES = 16


class DeviceRunnerSettings(BaseSettings):
    """Which device this runner drives, and how it reads the actions topic."""

    model_config = settings_config("FLYWHEEL_DEVICE_RUNNER_")

    device_id: str = Field(
        default="sim-0", min_length=1, pattern=r"^[A-Za-z0-9._:-]+$",
        description="Id of the device this runner owns; actions keyed by another id are ignored.",
    )
    kind: Literal["sim", "adb"] = Field(
        default="sim", description="'sim' drives a simulated SimPhone, 'adb' a real phone or "
                                   "emulator through the adb server.",
    )
    adb_serial: str | None = Field(
        default=None, description="adb serial of the phone for kind 'adb'; unset means the only "
                                  "attached device.",
    )
    group_id: str = Field(
        default=DEFAULT_GROUP_ID, min_length=1,
        description="Offset group prefix; the runner of device D commits its position on its "
                    "device's partition as group '<prefix>.D'. Run one runner per device.",
    )
    start_from: Literal["earliest", "latest"] = Field(
        default="earliest",
        description="Where a device's runner starts reading the first time it runs (later runs "
                    "resume from committed offsets); 'earliest' keeps actions sent before the "
                    "runner joined, and stale_after_s drops those of long-gone episodes.",
    )
    stale_after_s: float | None = Field(
        default=DEFAULT_STALE_AFTER_S, gt=0,
        description="Actions requested longer ago than this many seconds are dropped unexecuted "
                    "(their rollout has timed out; rollout and runner clocks must agree well "
                    "within this); unset keeps every action.",
    )
    poll_timeout_ms: int = Field(
        default=DEFAULT_POLL_TIMEOUT_MS, ge=1, le=60_000,
        description="Longest wait of one batch poll of the actions topic, in milliseconds.",
    )
    action_timeout_s: float = Field(
        default=DEFAULT_ACTION_TIMEOUT_S, gt=0, le=3600,
        description="Seconds one reset or action may take before the device counts as timed "
                    "out and the episode ends with a device.failed event.",
    )
    suite_seed: int = Field(
        default=0, ge=0,
        description="Suite seed used to rebuild a task instance from its task id on step 0.",
    )
    phones: int = Field(
        default=1, ge=1, le=1024,
        description="How many simulated phones this runner serves at once (kind 'sim'): one is "
                    "the device id itself, more are '<device_id>-0' … '<device_id>-<N-1>' (a "
                    "rollout names them '<device_id>*N'); their episodes interleave, so one "
                    "runner keeps many episodes going. An adb runner drives one phone.",
    )
    sim_devices: int = Field(
        default=DEFAULT_SIM_DEVICES, ge=0, le=1024,
        description="How many simulated phones (sim-0 … sim-N-1) `flywheel run` serves and "
                    "`flywheel devices list` offers.",
    )

    @field_validator("phones")
    @classmethod
    def _one_real_phone(cls, phones: int, info: ValidationInfo) -> int:
        if info.data.get("kind") == "adb" and phones != 1:
            raise ValueError(f"an adb runner drives one phone, not {phones}; run one runner per "
                             f"phone")
        return phones

    @property
    def device_ids(self) -> list[str]:
        """The ids of the phones this runner serves (see `phones`)."""
        return phone_ids(self.device_id, self.phones)

    def group_for(self, device_id: str | None = None) -> str:
        """The consumer group of `device_id` (this runner's device by default)."""
        return f"{self.group_id}.{device_id or self.device_id}"


def load_device_runner_settings(**overrides: object) -> DeviceRunnerSettings:
    """DeviceRunnerSettings from the environment; a bad value raises SettingsError in one sentence."""
    return load_settings(DeviceRunnerSettings, "device runner", **overrides)
