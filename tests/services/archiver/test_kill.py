"""The archiver as a real process, killed with SIGKILL mid-stream and restarted: every event is
archived exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from schemas.topics import TOPICS
from services.archiver.store import ArchiveStore
from streams.admin import create_topics
from streams.broker import LocalBroker
from streams.producer import TypedProducer
from tests.services.archiver.helpers import task

pytestmark = pytest.mark.integration

#: Guards against hangs only; not a speed assertion.
WAIT_S = 120.0
BATCH = 1500


def _start(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen([sys.executable, "-m", "services.archiver"], env=env,
                                stdout=out, stderr=subprocess.STDOUT)


def _wait_for(condition, what: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if process.poll() is not None:
            raise AssertionError(f"the archiver exited ({process.returncode}) before {what}:\n"
                                 + log.read_text()[-3000:])
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}:\n" + log.read_text()[-3000:])
        time.sleep(0.1)


def _produce(bootstrap: str, start: int) -> set[str]:
    with TypedProducer(bootstrap, client_id="test-kill-producer") as producer:
        for i in range(start, start + BATCH):
            producer.send(TOPICS["flywheel.tasks"], task(i, pad=300))
    return {task(i).event_id for i in range(start, start + BATCH)}


def test_sigkill_mid_stream_then_restart_archives_each_event_once(tmp_path: Path) -> None:
    store = ArchiveStore(tmp_path / "archive")
    log = tmp_path / "archiver.log"
    with LocalBroker.on_free_port(tmp_path / "broker") as broker:
        create_topics(broker.bootstrap, TOPICS.values())
        env = {**os.environ, "KAFKA_BOOTSTRAP_SERVERS": broker.bootstrap,
               "FLYWHEEL_ARCHIVER_ARCHIVE_DIR": str(store.root),
               "FLYWHEEL_ARCHIVER_FLUSH_INTERVAL_S": "0.2",
               "FLYWHEEL_ARCHIVER_FLUSH_MAX_EVENTS": "200",
               "PYTHONPATH": str(Path.cwd())}
        expected = _produce(broker.bootstrap, 0)
        first = _start(env, log)
        _wait_for(lambda: len(store.files()) >= 1, "the first flush", first, log)
        first.send_signal(signal.SIGKILL)  # no flush, no commit, no goodbye
        first.wait(timeout=30)
        archived_at_kill = len(store.event_ids())

        expected |= _produce(broker.bootstrap, BATCH)
        second = _start(env, log)
        try:
            _wait_for(lambda: expected <= store.event_ids(), "the archive to catch up", second,
                      log)
        finally:
            second.send_signal(signal.SIGTERM)
            assert second.wait(timeout=60) == 0, log.read_text()[-3000:]

    assert 0 < archived_at_kill < 2 * BATCH
    ids = store.read(["flywheel.tasks"], columns=["event_id"])["event_id"].to_pylist()
    assert len(ids) == len(set(ids)), "an event was archived twice"
    assert set(ids) == expected, "an event was lost"
    assert "stopped (SIGTERM)" in log.read_text()
