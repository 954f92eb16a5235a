"""`serve` on a real broker: an event the service's decide fails on goes to the dead letters
with the error and the service goes on; a failing fold ends the process with a traceback and
exit 70 (a crashed faust agent would otherwise leave a worker that consumes nothing)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from schemas.topics import TOPICS
from services.dataflow.agent import CRASH_EXIT, store_path
from services.dataflow.store import EventStore
from streams.admin import create_topics
from streams.broker import LocalBroker
from streams.codec import header_value
from streams.producer import TypedProducer
from tests.services.dataflow.helpers import proposed

pytestmark = pytest.mark.integration

#: Guards against hangs only; not a speed assertion.
WAIT_S = 120.0


def stored(tmp_path: Path, event_id: str) -> bool:
    path = store_path(tmp_path / "var", "crashing")
    if not path.exists():
        return False
    with EventStore(path) as store:
        return event_id in store


def wait_stored(tmp_path: Path, event_id: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not stored(tmp_path, event_id):
        assert proc.poll() is None, (tmp_path / "crashing.log").read_text()
        assert time.monotonic() < deadline, f"event {event_id} was never stored"
        time.sleep(0.3)


def dead_letters(bootstrap: str) -> list:  # type: ignore[type-arg]
    from kafka import KafkaConsumer

    consumer = KafkaConsumer("flywheel.tasks.dlq", bootstrap_servers=bootstrap,
                             auto_offset_reset="earliest", consumer_timeout_ms=3000)
    try:
        return list(consumer)
    finally:
        consumer.close()


def test_a_failing_decide_is_dead_lettered_and_a_failing_fold_ends_the_process(
        tmp_path: Path) -> None:
    with LocalBroker.on_free_port(tmp_path / "broker") as broker:
        create_topics(broker.bootstrap, TOPICS.values())
        env = {**os.environ, "KAFKA_BOOTSTRAP_SERVERS": broker.bootstrap,
               "FLYWHEEL_DATA_DIR": str(tmp_path / "var")}
        log = (tmp_path / "crashing.log").open("wb")
        proc = subprocess.Popen([sys.executable, "-m", "tests.services.dataflow.crashing_service"],
                                env=env, stdout=log, stderr=subprocess.STDOUT,
                                cwd=Path(__file__).resolve().parents[3])
        try:
            fine, after = proposed(i=0), proposed(i=2)
            bad_decide = proposed(i=1).model_copy(update={"goal": "decide wrongly"})
            bad_fold = proposed(i=3).model_copy(update={"goal": "fold wrongly"})
            with TypedProducer(broker.bootstrap) as producer:
                for event in (fine, bad_decide, after):
                    producer.send(TOPICS["flywheel.tasks"], event).get(30)
                producer.flush()
                wait_stored(tmp_path, after.event_id, proc)  # it went on past the bad one
                letters = dead_letters(broker.bootstrap)
                assert [header_value(m.headers, "error_type") for m in letters] == ["KeyError"]
                assert bad_decide.event_id.encode() in letters[0].value
                producer.send(TOPICS["flywheel.tasks"], bad_fold).get(30)
                producer.flush()
            code = proc.wait(WAIT_S)
        finally:
            if proc.poll() is None:
                proc.kill()
            log.close()
        text = (tmp_path / "crashing.log").read_text()
        assert code == CRASH_EXIT, text
        assert "crashing failed on a batch and stops" in text and "a bug in the fold" in text
        assert "it goes to flywheel.tasks.dlq" in text
        for event, kept in ((fine, True), (after, True), (bad_decide, False), (bad_fold, False)):
            assert stored(tmp_path, event.event_id) is kept, event.goal
