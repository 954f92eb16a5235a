"""`flywheel broker|topics|dlq` through the real Typer app against a real broker."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemas.topics import TOPICS, Topic
from services.cli.main import app
from streams.broker import free_port
from streams.producer import TypedProducer

pytestmark = pytest.mark.integration

runner = CliRunner()


def test_broker_start_status_stop(tmp_path: Path) -> None:
    env = {"FLYWHEEL_DATA_DIR": str(tmp_path), "FLYWHEEL_BROKER_PORT": str(free_port()),
           "KAFKA_BOOTSTRAP_SERVERS": ""}
    port = env["FLYWHEEL_BROKER_PORT"]
    try:
        started = runner.invoke(app, ["broker", "start"], env=env)
        assert started.exit_code == 0, started.output
        assert f"127.0.0.1:{port}" in started.output
        status = runner.invoke(app, ["broker", "status"], env=env)
        assert status.exit_code == 0, status.output
        assert "yes" in status.output and port in status.output
    finally:
        stopped = runner.invoke(app, ["broker", "stop"], env=env)
    assert stopped.exit_code == 0 and "stopped" in stopped.output
    after = runner.invoke(app, ["broker", "status"], env=env)
    assert after.exit_code == 3 and "no" in after.output


def test_topics_create_then_list(bootstrap: str) -> None:
    env = {"KAFKA_BOOTSTRAP_SERVERS": bootstrap}
    created = runner.invoke(app, ["topics", "create"], env=env)
    assert created.exit_code == 0, created.output
    again = runner.invoke(app, ["topics", "create"], env=env)
    assert "0 created" in again.output
    listed = runner.invoke(app, ["topics", "list", ], env=env)
    assert listed.exit_code == 0
    for name in TOPICS:
        assert name in listed.output and f"{name}.dlq" in listed.output
    assert "missing" not in listed.output


def test_dlq_show_prints_error_source_and_safe_preview(
        bootstrap: str, fresh_topic: Callable[[str], Topic]) -> None:
    from streams.consumer import TypedBatchConsumer
    from tests.streams.helpers import drain

    topic = fresh_topic("flywheel.tasks")
    with TypedProducer(bootstrap) as producer:
        producer.send_raw(topic.name, b"\x01\x02 [not] json", key=b"k")
        producer.flush()
    with TypedBatchConsumer(bootstrap, [topic], "g-cli") as consumer:
        drain(consumer, 0, dead_letters=1)
    result = runner.invoke(app, ["dlq", "show", topic.name, "--limit", "5"],
                           env={"KAFKA_BOOTSTRAP_SERVERS": bootstrap, "COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert "DecodeError" in result.output and "not valid JSON" in result.output
    assert f"{topic.name}[" in result.output and "]@0" in result.output
    assert "\\x01\\x02 [not] json" in result.output
    assert "1 dead letter(s) shown: g-cli 1" in result.output  # grouped by the consumer that refused it


def test_dlq_show_with_no_dead_letters(bootstrap: str,
                                       fresh_topic: Callable[[str], Topic]) -> None:
    topic = fresh_topic("flywheel.tasks")
    result = runner.invoke(app, ["dlq", "show", topic.name],
                           env={"KAFKA_BOOTSTRAP_SERVERS": bootstrap})
    assert result.exit_code == 0 and "no dead letters" in result.output


def test_bad_config_is_one_sentence_without_traceback() -> None:
    result = runner.invoke(app, ["topics", "list"],
                           env={"KAFKA_BOOTSTRAP_SERVERS": "", "FLYWHEEL_BROKER_PORT": "nope"})
    assert result.exit_code == 1
    assert "broker_port" in result.output and "Traceback" not in result.output


def test_dlq_show_of_an_unknown_topic_says_so_without_starting_a_broker(tmp_path) -> None:
    env = {"KAFKA_BOOTSTRAP_SERVERS": "", "FLYWHEEL_DATA_DIR": str(tmp_path)}
    result = runner.invoke(app, ["dlq", "show", "no.such.topic"], env=env)
    assert result.exit_code == 1 and "not a topic of the loop" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "broker.json").exists()


def test_dlq_show_of_a_topic_the_broker_lacks_says_so(bootstrap: str) -> None:
    result = runner.invoke(app, ["dlq", "show", "no.such.topic"], env={"KAFKA_BOOTSTRAP_SERVERS": bootstrap})
    assert result.exit_code == 1 and "has no topic no.such.topic.dlq" in result.output
