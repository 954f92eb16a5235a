"""Settings for the adb runner: where the adb server is, which device, timeouts and retries."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings

from schemas.settings import load_settings, settings_config

__all__ = ["DEFAULT_ADB_PORT", "AdbSettings", "load_adb_settings"]

#: The port every adb server listens on unless told otherwise (`adb -P`).
DEFAULT_ADB_PORT = 5037


class AdbSettings(BaseSettings):
    """How the adb runner reaches its device (env prefix FLYWHEEL_ADB_)."""

    model_config = settings_config("FLYWHEEL_ADB_")

    profile: Literal["stock", "companion"] = Field(
        default="stock",
        description="What the phone runs: 'stock' drives Android as it ships (providers, "
                    "settings, cmd, intents, dumpsys); 'companion' expects the Flywheel "
                    "companion apps com.flywheel.* (env FLYWHEEL_ADB_PROFILE).")
    ledger_path: str = Field(
        default="/data/local/tmp/flywheel-ledger.json",
        description="Device file where the stock profile records what the phone held before "
                    "Flywheel touched it, so reset can restore it (env FLYWHEEL_ADB_LEDGER_PATH).")
    host: str = Field(default="127.0.0.1", description="Host of the adb server (env FLYWHEEL_ADB_HOST).")
    port: int = Field(default=DEFAULT_ADB_PORT, ge=1, le=65535,
                      description="Port of the adb server (env FLYWHEEL_ADB_PORT).")
    serial: str | None = Field(default=None,
                               description="Serial of the device to drive; unset means the only "
                                           "attached device (env FLYWHEEL_ADB_SERIAL).")
    call_timeout_s: float = Field(default=20.0, gt=0, le=600,
                                  description="Seconds one adb call may take before it counts as "
                                              "timed out (env FLYWHEEL_ADB_CALL_TIMEOUT_S).")
    retries: int = Field(default=2, ge=0, le=10,
                         description="Extra tries for a call that failed transiently "
                                     "(env FLYWHEEL_ADB_RETRIES).")
    retry_backoff_s: float = Field(default=0.5, ge=0, le=30,
                                   description="Pause before the first retry, doubled after each "
                                               "(env FLYWHEEL_ADB_RETRY_BACKOFF_S).")
    dump_mode: Literal["pull", "tty"] = Field(
        default="pull",
        description="How the UI tree is read: 'pull' dumps to a file and pulls it over sync, "
                    "'tty' dumps to /dev/tty and reads stdout (env FLYWHEEL_ADB_DUMP_MODE).")
    dump_path: str = Field(default="/data/local/tmp/flywheel-window_dump.xml",
                           description="Device path for the UI dump in 'pull' mode "
                                       "(env FLYWHEEL_ADB_DUMP_PATH).")
    screenshots: bool = Field(default=True,
                              description="Capture a screencap PNG with every observation "
                                          "(env FLYWHEEL_ADB_SCREENSHOTS).")
    blob_dir: Path = Field(default=Path("var/blobs"),
                           description="Folder of the content-addressed blob store for "
                                       "screenshots (env FLYWHEEL_ADB_BLOB_DIR).")
    wait_scale: float = Field(default=1.0, ge=0, le=10,
                              description="Multiplier on real sleeping for 'wait' actions and "
                                          "settle pauses; 0 never sleeps (env "
                                          "FLYWHEEL_ADB_WAIT_SCALE).")
    step_ms: int = Field(default=1000, ge=0,
                         description="Logical clock advance per action, as on the sim phone "
                                     "(env FLYWHEEL_ADB_STEP_MS).")


def load_adb_settings(**overrides: object) -> AdbSettings:
    """AdbSettings from the environment; a bad value raises SettingsError in one sentence."""
    return load_settings(AdbSettings, "adb", **overrides)
