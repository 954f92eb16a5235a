"""`serve` on a real broker: a service that fails on an event ends its process with a
traceback and exit 70 (a crashed faust agent would otherwise leave a worker that consumes
nothing), and the events before it are stored."""

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


def test_a_service_that_fails_on_an_event_exits_instead_of_idling(tmp_path: Path) -> None:
    with LocalBroker.on_free_port(tmp_path / "broker") as broker:
        create_topics(broker.bootstrap, TOPICS.values())
        env = {**os.environ, "KAFKA_BOOTSTRAP_SERVERS": broker.bootstrap,
               "FLYWHEEL_DATA_DIR": str(tmp_path / "var")}
        log = (tmp_path / "crashing.log").open("wb")
        proc = subprocess.Popen([sys.executable, "-m", "tests.services.dataflow.crashing_service"],
                                env=env, stdout=log, stderr=subprocess.STDOUT,
                                cwd=Path(__file__).resolve().parents[3])
        try:
            fine = proposed(i=0)
            bad = proposed(i=1).model_copy(update={"goal": "crash the service"})
            with TypedProducer(broker.bootstrap) as producer:
                producer.send(TOPICS["flywheel.tasks"], fine).get(30)
                producer.flush()
                deadline = time.monotonic() + WAIT_S
                while not stored(tmp_path, fine.event_id):
                    assert proc.poll() is None, (tmp_path / "crashing.log").read_text()
                    assert time.monotonic() < deadline, "the first event was never stored"
                    time.sleep(0.3)
                producer.send(TOPICS["flywheel.tasks"], bad).get(30)
                producer.flush()
            code = proc.wait(WAIT_S)
        finally:
            if proc.poll() is None:
                proc.kill()
            log.close()
        text = (tmp_path / "crashing.log").read_text()
        assert code == CRASH_EXIT, text
        assert "crashing failed on a batch and stops" in text and "KeyError" in text
        with EventStore(store_path(tmp_path / "var", "crashing")) as store:
            assert fine.event_id in store and bad.event_id not in store  # redelivered on restart
