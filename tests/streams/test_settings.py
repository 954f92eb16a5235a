"""Bus settings: env names, and one sentence naming the field on bad config."""

from __future__ import annotations

from pathlib import Path

import pytest

from streams.settings import BusSettings, load_bus_settings


def test_env_settings_and_bad_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "a:1,b:2")
    monkeypatch.setenv("FLYWHEEL_DATA_DIR", "/tmp/x")
    settings = load_bus_settings()
    assert (settings.bootstrap_servers, settings.data_dir) == ("a:1,b:2", Path("/tmp/x"))
    monkeypatch.setenv("FLYWHEEL_BROKER_PORT", "70000")
    with pytest.raises(ValueError, match="broker_port"):
        load_bus_settings()


def test_defaults_mean_the_local_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("KAFKA_BOOTSTRAP_SERVERS", "FLYWHEEL_DATA_DIR", "FLYWHEEL_BROKER_PORT"):
        monkeypatch.delenv(name, raising=False)
    settings = BusSettings()
    assert settings.bootstrap_or_none() is None
    assert (settings.data_dir, settings.broker_port) == (Path("var"), 19092)
    assert settings.max_message_bytes == 1024 * 1024
    with pytest.raises(ValueError):
        settings.broker_port = 1  # frozen
