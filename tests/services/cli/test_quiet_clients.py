"""`flywheel run` silences the Kafka clients' reconnect chatter only while it runs: an
in-process run (the chaos tests, a notebook) must not leave those loggers muted for what runs
after it (tests/streams/test_redact.py logs on `kafka.conn` and failed after such a run)."""

from __future__ import annotations

import logging

import pytest
from typer.testing import CliRunner

from services.cli import run_cmd
from services.cli.main import app

CLIENTS = ("kafka", "aiokafka")


def test_run_quiets_the_clients_while_it_runs_and_restores_their_levels(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CLIENTS:
        monkeypatch.setattr(logging.getLogger(name), "level", logging.INFO)
    during: dict[str, int] = {}

    def bad_settings(**_: object) -> object:
        during.update({name: logging.getLogger(name).level for name in CLIENTS})
        raise ValueError("FLYWHEEL_BROKER_PORT must be a port number.")

    monkeypatch.setattr(run_cmd, "load_bus_settings", bad_settings)
    result = CliRunner().invoke(app, ["run", "--examples", "0", "--duration", "1"])
    assert result.exit_code != 0 and "FLYWHEEL_BROKER_PORT" in result.output, result.output
    assert during == {name: logging.CRITICAL for name in CLIENTS}
    assert {name: logging.getLogger(name).level for name in CLIENTS} == {
        name: logging.INFO for name in CLIENTS}
    assert logging.getLogger("kafka.conn").isEnabledFor(logging.WARNING)  # warnings heard again
