"""A faust pass-through agent on the real broker: valid events flow, bad ones dead-letter."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import aiokafka
import pytest

from schemas.topics import TOPICS, Topic
from streams.consumer import TypedBatchConsumer
from streams.dlq import read_dead_letters
from streams.faust_app import FAUST_DEFAULTS, FETCH_MAX_WAIT_MS, make_app
from streams.lifecycle import stop_process
from streams.producer import TypedProducer
from streams.settings import BusSettings
from tests.streams.helpers import drain, verdict

ROOT = Path(__file__).resolve().parents[2]


def test_make_app_uses_local_broker_friendly_settings(tmp_path: Path) -> None:
    settings = BusSettings(bootstrap_servers="k1:9092,k2:9092", data_dir=tmp_path)
    app = make_app("unit-app", settings, broker_commit_every=10)
    conf = app.conf
    assert conf.processing_guarantee.value == "at_least_once"
    assert conf.broker_session_timeout == 6.0
    assert conf.topic_allow_declare is False and conf.web_enabled is False
    assert str(conf.store) == "memory:"
    assert [str(url) for url in conf.broker] == ["kafka://k1:9092", "kafka://k2:9092"]
    assert conf.broker_commit_every == 10
    assert FAUST_DEFAULTS["processing_guarantee"] != "exactly_once"


def test_worker_consumer_holds_empty_fetches_briefly_without_patching_aiokafka(tmp_path: Path) -> None:
    """faust builds its worker consumer with fetch_max_wait_ms=1500; the app's own transport
    caps it, and aiokafka's class is the library's own afterwards (no process-wide patch)."""
    original = aiokafka.AIOKafkaConsumer

    async def built_consumer_wait() -> int:
        app = make_app("unit-app", BusSettings(bootstrap_servers="k1:9092", data_dir=tmp_path))
        consumer = app.transport.create_consumer(callback=lambda message: None,
                                                  on_partitions_revoked=None,
                                                  on_partitions_assigned=None)
        client = consumer._new_consumer_thread()._create_worker_consumer(app.transport)
        try:
            assert type(client) is original
            return client._fetch_max_wait_ms
        finally:
            await client.stop()

    assert asyncio.run(built_consumer_wait()) == FETCH_MAX_WAIT_MS == 50
    assert aiokafka.AIOKafkaConsumer is original


@pytest.mark.integration
def test_passthrough_agent_delivers_valid_and_dead_letters_bad(
        bootstrap: str, fresh_topic: Callable[[str], Topic], tmp_path: Path) -> None:
    source = fresh_topic("flywheel.verdicts")
    out = fresh_topic("flywheel.verdicts")
    events = [verdict(i) for i in range(5)]
    with TypedProducer(bootstrap) as producer:
        for event in events[:2]:
            producer.send(source, event)
        producer.send_raw(source.name, b"\xffnot an event", key=b"ep-1")
        for event in events[2:]:
            producer.send(source, event)
        producer.flush()
    log = (tmp_path / "worker.log").open("wb")
    worker = subprocess.Popen(
        [sys.executable, "-m", "tests.streams.faust_passthrough", bootstrap, source.name,
         out.name, str(tmp_path)], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        with TypedBatchConsumer(bootstrap, [out], f"g-{uuid.uuid4().hex[:6]}") as consumer:
            records = drain(consumer, len(events), alive=lambda: worker.poll() is None)
        letters = read_dead_letters(bootstrap, source.name)
    finally:
        stop_process(worker)
        log.close()
    output = (tmp_path / "worker.log").read_text(errors="replace")[-3000:]
    assert sorted(r.event.event_id for r in records) == sorted(e.event_id for e in events), output
    assert [d.value for d in letters] == [b"\xffnot an event"]
    assert letters[0].error_type == "DecodeError"
    assert TOPICS["flywheel.verdicts"].type_names == out.type_names
