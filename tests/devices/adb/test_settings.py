"""AdbSettings: environment prefix and one-sentence errors for bad config."""

from __future__ import annotations

import pytest

from devices.adb.settings import AdbSettings, load_adb_settings


def test_environment_prefix_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLYWHEEL_ADB_SERIAL", "R58M123")
    monkeypatch.setenv("FLYWHEEL_ADB_DUMP_MODE", "tty")
    settings = load_adb_settings()
    assert (settings.serial, settings.dump_mode, settings.port) == ("R58M123", "tty", 5037)


def test_bad_value_names_the_field_in_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLYWHEEL_ADB_PORT", "99999")
    with pytest.raises(ValueError) as caught:
        load_adb_settings()
    message = str(caught.value)
    assert "'port'" in message and "FLYWHEEL_ADB_PORT" in message and "\n" not in message


def test_every_field_is_described() -> None:
    assert all(field.description for field in AdbSettings.model_fields.values())
