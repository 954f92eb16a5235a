"""A broker's death stops every kind of service within 10 s with one sentence and no traceback:
the rollout (its own loop), a faust agent (the verifier), the archiver and the gate's loop."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from schemas.topics import TOPICS
from services.broker_watch import RepeatFilter
from streams.admin import create_topics
from streams.broker import LocalBroker, kafka_answers

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ["services.rollout", "services.verifier", "services.archiver"]
#: The bound the README states; the watchdog needs about 4 s (3 misses of a 1 s probe) plus the stop.
STOP_BOUND_S = 10.0


def test_every_service_stops_soon_after_the_broker_dies(tmp_path: Path) -> None:
    broker = LocalBroker.on_free_port(tmp_path / "broker").__enter__()
    processes: dict[str, subprocess.Popen[bytes]] = {}
    logs: dict[str, Path] = {}
    try:
        create_topics(broker.bootstrap, TOPICS.values())
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FLYWHEEL_", "KAFKA_"))}
        env.update(KAFKA_BOOTSTRAP_SERVERS=broker.bootstrap, FLYWHEEL_DATA_DIR=str(tmp_path / "var"),
                   PYTHONPATH=str(ROOT))
        for module in SERVICES:
            logs[module] = tmp_path / f"{module}.log"
            processes[module] = subprocess.Popen([sys.executable, "-m", module], env=env, cwd=ROOT,
                                                 stdout=logs[module].open("wb"), stderr=subprocess.STDOUT)
        time.sleep(12)  # all started and consuming
        assert all(p.poll() is None for p in processes.values()), {m: logs[m].read_text()[-2000:] for m in logs}
    finally:
        broker.__exit__(None, None, None)
    died = time.monotonic()
    assert not kafka_answers(broker.bootstrap)
    stopped_after = {}
    for module, process in processes.items():
        try:
            process.wait(max(0.1, died + STOP_BOUND_S + 5 - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
        stopped_after[module] = time.monotonic() - died
    for module, process in processes.items():
        output = logs[module].read_text(errors="replace")
        assert process.returncode == 1, (module, process.returncode, output[-3000:])
        assert stopped_after[module] <= STOP_BOUND_S, (module, stopped_after[module])
        assert "stopped answering" in output and "Traceback" not in output, (module, output[-3000:])
        tail = output[output.index("stopped answering"):]
        assert len(tail.splitlines()) < 40, (module, tail[-3000:])  # no flood after the sentence


def test_repeated_client_errors_pass_once_per_window_and_the_services_lines_always() -> None:
    quiet = RepeatFilter(quiet_s=60)

    def record(name: str, msg: str) -> logging.LogRecord:
        return logging.LogRecord(name, logging.ERROR, __file__, 1, msg, None, None)

    client = [quiet.filter(record("aiokafka.conn", f"Unable connect to node with id {i}")) for i in range(50)]
    assert client.count(True) == 1
    assert quiet.filter(record("aiokafka.consumer", "Heartbeat failed"))  # another kind passes
    assert all(quiet.filter(record("services.rollout", f"episode {i} ended")) for i in range(50))
