"""AdbSettings for tests: a local server on `port`, fast failure and no waiting."""

from __future__ import annotations

from pathlib import Path

from devices.adb.settings import AdbSettings

__all__ = ["TEST_CALL_TIMEOUT_S", "adb_test_settings"]

#: Short enough that a stalled call fails fast in tests, long enough for a loaded 2-core box.
TEST_CALL_TIMEOUT_S = 2.0


def adb_test_settings(port: int, blob_dir: Path, **overrides: object) -> AdbSettings:
    """Settings for the adb server at `port`: 2 retries, no backoff and no waits (`overrides`,
    e.g. the serial and profile, win)."""
    values: dict[str, object] = {
        "host": "127.0.0.1", "port": port, "call_timeout_s": TEST_CALL_TIMEOUT_S, "retries": 2,
        "retry_backoff_s": 0.0, "wait_scale": 0.0, "blob_dir": blob_dir,
    }
    values.update(overrides)
    return AdbSettings(**values)  # type: ignore[arg-type]
