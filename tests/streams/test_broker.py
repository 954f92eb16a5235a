"""Local broker lifecycle: start, record, status, reuse and stop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streams.broker import (
    BrokerError,
    LocalBroker,
    broker_status,
    ensure_broker,
    find_tansu,
    free_port,
    kafka_answers,
)
from streams.settings import BusSettings

pytestmark = pytest.mark.integration


def test_start_records_status_and_stop(tmp_path: Path) -> None:
    settings = BusSettings(data_dir=tmp_path, broker_port=free_port())
    broker = LocalBroker.from_settings(settings)
    with broker:
        assert broker.is_running()
        assert kafka_answers(broker.bootstrap)
        record = json.loads((tmp_path / "broker.json").read_text())
        assert (record["pid"], record["port"]) == (broker.pid, settings.broker_port)
        status = broker_status(settings)
        assert status.running and status.pid == broker.pid
        assert status.bootstrap == f"127.0.0.1:{settings.broker_port}"
        assert (tmp_path / "broker.log").stat().st_size > 0
    assert not broker.is_running()
    assert not (tmp_path / "broker.json").exists()
    assert not broker_status(settings).running
    assert not kafka_answers(broker.bootstrap, timeout_ms=500)


def test_ensure_broker_starts_once_then_reuses(tmp_path: Path) -> None:
    settings = BusSettings(data_dir=tmp_path, broker_port=free_port())
    bootstrap, started = ensure_broker(settings)
    try:
        assert started is not None and started.is_running()
        again, second = ensure_broker(settings)
        assert (again, second) == (bootstrap, None)
        assert LocalBroker.recorded(tmp_path).pid == started.pid
    finally:
        assert started is not None
        started.stop()


def test_ensure_broker_uses_configured_servers_without_starting(tmp_path: Path) -> None:
    settings = BusSettings(bootstrap_servers="kafka-1:9092", data_dir=tmp_path)
    assert ensure_broker(settings) == ("kafka-1:9092", None)
    assert not (tmp_path / "broker.json").exists()


def test_busy_port_gives_a_clear_error(tmp_path: Path, bootstrap: str) -> None:
    port = int(bootstrap.rsplit(":", 1)[1]) if bootstrap.startswith("127.0.0.1:") else None
    if port is None:
        pytest.skip("needs the local test broker")
    with pytest.raises(BrokerError, match=f"port {port} is already in use"):
        LocalBroker(tmp_path, port).start()


def test_tansu_binary_is_found_and_executable() -> None:
    path = find_tansu()
    assert path.name == "tansu" and path.stat().st_mode & 0o100
