"""Settings of the archiver service (env prefix FLYWHEEL_ARCHIVER_)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings

from schemas.settings import load_settings, settings_config
from streams.settings import load_bus_settings

__all__ = [
    "DEFAULT_FLUSH_INTERVAL_S",
    "DEFAULT_FLUSH_MAX_EVENTS",
    "ArchiverSettings",
    "load_archiver_settings",
    "resolve_archive_dir",
]

#: Two seconds bounds what a crash of a local run can lose while keeping files few (one file
#: per topic and day per flush); production can raise it and compact.
DEFAULT_FLUSH_INTERVAL_S = 2.0
#: 50k events of ~1 KiB is ~50 MiB of buffer: bounded memory, and big enough Parquet files.
DEFAULT_FLUSH_MAX_EVENTS = 50_000
#: Recent tracking keys the archiver keeps to skip an event sent again at a new offset: four
#: full flushes' worth, ~15 MiB of ids, whatever the size of the archive.
DEFAULT_TRACKING_IDS = 200_000
#: One batch poll waits at most this long, so the flush timer and Ctrl-C are checked often.
DEFAULT_POLL_TIMEOUT_MS = 200


class ArchiverSettings(BaseSettings):
    """Where the archive lives, how often it is flushed, and which consumer group reads it."""

    model_config = settings_config("FLYWHEEL_ARCHIVER_")

    archive_dir: Path | None = Field(
        default=None,
        description="Folder of the Parquet archive; unset means <FLYWHEEL_DATA_DIR>/archive.",
    )
    flush_interval_s: float = Field(
        default=DEFAULT_FLUSH_INTERVAL_S, gt=0, le=3600,
        description="Buffered events are written at least this often, in seconds; it bounds "
                    "what a crash can lose.",
    )
    flush_max_events: int = Field(
        default=DEFAULT_FLUSH_MAX_EVENTS, ge=1,
        description="Buffered events are written as soon as this many are waiting.",
    )
    group_id: str = Field(
        default="flywheel-archiver", min_length=1,
        description="Kafka consumer group of the archiver.",
    )
    poll_timeout_ms: int = Field(
        default=DEFAULT_POLL_TIMEOUT_MS, ge=1, le=60_000,
        description="Longest wait of one batch poll, in milliseconds.",
    )
    tracking_ids: int = Field(
        default=DEFAULT_TRACKING_IDS, ge=1, le=50_000_000,
        description="How many of the most recently archived event ids are kept to skip an "
                    "event sent again at a new offset (re-delivered offsets are skipped by "
                    "per-partition watermarks, whatever this is).",
    )
    include_dead_letters: bool = Field(
        default=True,
        description="Also archive every topic's dead-letter topic (raw bytes and headers).",
    )

    def resolved_archive_dir(self, data_dir: Path) -> Path:
        """The archive folder: archive_dir if set, else data_dir/archive."""
        return self.archive_dir if self.archive_dir is not None else data_dir / "archive"


def load_archiver_settings(**overrides: object) -> ArchiverSettings:
    """ArchiverSettings from the environment; a bad value raises SettingsError in one sentence."""
    return load_settings(ArchiverSettings, "archiver", **overrides)


def resolve_archive_dir(explicit: Path | None = None) -> Path:
    """The archive folder: `explicit` if given, else from ArchiverSettings and BusSettings."""
    if explicit is not None:
        return explicit
    return load_archiver_settings().resolved_archive_dir(load_bus_settings().data_dir)
