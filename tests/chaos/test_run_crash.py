"""Services crashing under `flywheel run` during traffic: the archiver is rebuilt, a runner that
keeps failing stops the run, and the archive drains before the broker stops: not one
acknowledged event is lost. The crashes are in the test input (bytewax style)."""

from __future__ import annotations

import threading
import time
from functools import partial
from pathlib import Path

import pytest
from typer.testing import CliRunner

from schemas.topics import TOPICS
from services.archiver.loop import Archiver
from services.archiver.store import ArchiveStore
from services.cli import run_cmd, supervisor
from services.cli.main import app
from services.device_runner.fleet import SimFleet
from streams.admin import list_topics
from streams.broker import free_port, kafka_answers
from tests.chaos.conftest import ChaosFigures
from tests.chaos.traffic import Traffic
from tests.services.archiver.helpers import task

pytestmark = pytest.mark.integration

#: Guards against hangs only; not a speed assertion.
WAIT_S = 90.0
EVENTS = 3000


def test_services_failing_under_run_lose_no_acknowledged_event(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chaos_figures: ChaosFigures) -> None:
    data_dir, port = tmp_path / "var", free_port()
    bootstrap = f"127.0.0.1:{port}"
    monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)
    monkeypatch.setenv("FLYWHEEL_DATA_DIR", str(data_dir))
    monkeypatch.setenv("FLYWHEEL_BROKER_PORT", str(port))
    monkeypatch.setenv("FLYWHEEL_ARCHIVER_FLUSH_INTERVAL_S", "0.5")
    traffic_acked = threading.Event()

    real_run_one = SimFleet.run_one

    def crashing_runner(self: SimFleet, index: int, stop: threading.Event) -> None:
        if index == 0:  # the runner of sim-0 and sim-1 fails, every time, once the traffic is acknowledged
            traffic_acked.wait(WAIT_S)
            raise RuntimeError("the sim phones' runner crashed (injected)")
        real_run_one(self, index, stop)

    real_step = Archiver.step
    crashed = threading.Event()

    def crashing_step(self: Archiver) -> int:
        # Once, mid-traffic, with rows buffered: the archiver is rebuilt and resumes.
        if not crashed.is_set() and self.stats.polled >= EVENTS // 3 and self.buffered:
            crashed.set()
            raise RuntimeError("the archiver crashed (injected)")
        return real_step(self)

    monkeypatch.setattr(SimFleet, "run_one", crashing_runner)
    monkeypatch.setattr(Archiver, "step", crashing_step)
    monkeypatch.setattr(supervisor, "RESTART_BACKOFF_S", 0.05)
    monkeypatch.setattr(run_cmd, "Supervisor",
                        partial(supervisor.Supervisor, max_restarts=1))

    holder: dict[str, Traffic] = {}

    def send() -> None:
        deadline = time.monotonic() + WAIT_S
        while not (kafka_answers(bootstrap) and "flywheel.tasks" in list_topics(bootstrap)):
            if time.monotonic() > deadline:
                return
            time.sleep(0.2)
        traffic = holder["t"] = Traffic(bootstrap, TOPICS["flywheel.tasks"], task,
                                        rate=1000, limit=EVENTS).start()
        traffic.done.wait(WAIT_S)
        traffic_acked.set()

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    result = CliRunner().invoke(app, ["run", "--sim-devices", "2", "--examples", "0",
                                         "--duration", str(WAIT_S)])
    sender.join(10)
    output = result.output
    words = " ".join(output.split())
    assert result.exit_code == 1, output[-3000:]
    assert "the archiver failed" in words and "restarting it" in words, output[-3000:]
    assert "service device-runner sim-0…sim-1 failed 2 times" in words, output[-3000:]
    assert "Traceback" not in output
    assert not kafka_answers(bootstrap), "the run left its broker running"
    acked = holder["t"].acked_ids()
    store = ArchiveStore(data_dir / "archive")
    ids = store.read(["flywheel.tasks"], columns=["event_id"])["event_id"].to_pylist()
    lost, duplicated = acked - set(ids), len(ids) - len(set(ids))
    assert len(acked) == EVENTS and crashed.is_set()
    assert not lost and duplicated == 0
    chaos_figures.record("flywheel run, services crash", acknowledged=len(acked),
                         lost=len(lost), duplicated=duplicated, **{"dead-lettered": 0},
                         note="archiver crashed once (rebuilt), the sims' runner gave up → drained")
