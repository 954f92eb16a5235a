"""kill -9 during traffic: of the archiver, of a device runner, of the broker under `flywheel run`
and of `flywheel run` itself. The count to check against is independent: the event ids the
broker acknowledged to a producer thread, not anything the services say about themselves."""

from __future__ import annotations

import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from schemas.topics import TOPICS
from services.archiver.store import ArchiveStore
from services.device_runner.decide import response_id
from streams.admin import create_topics, list_topics
from streams.broker import LocalBroker, free_port, kafka_answers
from streams.consumer import TypedBatchConsumer
from tests.chaos.conftest import ChaosFigures
from tests.chaos.traffic import Traffic
from tests.services.archiver.helpers import task
from tests.services.device_runner.helpers import request

pytestmark = pytest.mark.integration

#: Guards against hangs only; not a speed assertion.
WAIT_S = 90.0
TASKS = TOPICS["flywheel.tasks"]
#: The flush interval the services run with here; the loss bound a crash may cost.
FLUSH_S = 0.5
#: Time between an event's acknowledgement and the archiver polling it on a busy 2-core box
#: (one poll, one decode): added to the bound when checking what a dead broker cost.
POLL_SLACK_S = 1.5


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "KAFKA_BOOTSTRAP_SERVERS"}
    env.update({"PYTHONPATH": str(Path.cwd()), "COLUMNS": "200",
                "FLYWHEEL_ARCHIVER_FLUSH_INTERVAL_S": str(FLUSH_S)})
    env.update(extra)
    return env


def _spawn(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen([sys.executable, "-m", *args], env=env, stdout=out,
                                stderr=subprocess.STDOUT)


def _wait(condition: Callable[[], bool], what: str, log: Path,
          process: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if process is not None and process.poll() is not None:
            raise AssertionError(f"exited ({process.returncode}) before {what}:\n"
                                 + log.read_text(errors="replace")[-3000:])
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}:\n"
                                 + log.read_text(errors="replace")[-3000:])
        time.sleep(0.05)


def _archived(store: ArchiveStore) -> list[str]:
    if not store.files(["flywheel.tasks"]):
        return []
    return store.read(["flywheel.tasks"], columns=["event_id"])["event_id"].to_pylist()


def test_archiver_kill9_cycles_lose_and_duplicate_nothing(tmp_path: Path,
                                                          chaos_figures: ChaosFigures) -> None:
    store = ArchiveStore(tmp_path / "archive")
    log = tmp_path / "archiver.log"
    with LocalBroker.on_free_port(tmp_path / "broker") as broker:
        create_topics(broker.bootstrap, TOPICS.values())
        env = _env(KAFKA_BOOTSTRAP_SERVERS=broker.bootstrap, FLYWHEEL_DATA_DIR=str(tmp_path),
                   FLYWHEEL_ARCHIVER_ARCHIVE_DIR=str(store.root))
        traffic = Traffic(broker.bootstrap, TASKS, task).start()
        rejoins: list[float] = []
        process = _spawn(["services.archiver"], env, log)
        try:
            for cycle in range(4):
                files, started = len(store.files()), time.monotonic()
                _wait(lambda n=files: len(store.files()) > n, "a flush", log, process)
                rejoins.append(time.monotonic() - started)
                if cycle == 3:
                    break
                time.sleep(0.7)
                process.send_signal(signal.SIGKILL)  # no flush, no commit, no goodbye
                process.wait(30)
                process = _spawn(["services.archiver"], env, log)
            traffic.stop()
            acked = traffic.acked_ids()
            _wait(lambda: acked <= set(_archived(store)), "the archive to catch up", log,
                  process)
        finally:
            process.send_signal(signal.SIGTERM)
            code = process.wait(60)
    assert code == 0, log.read_text()[-3000:]
    ids = _archived(store)
    lost, duplicated = acked - set(ids), len(ids) - len(set(ids))
    assert not lost and duplicated == 0
    assert len(acked) > 1000
    chaos_figures.record(
        "archiver (3 x kill -9)", acknowledged=len(acked), lost=len(lost),
        duplicated=duplicated, **{"dead-lettered": 0},
        note=f"start → first flush: fresh {rejoins[0]:.1f} s, after kill -9 median "
             f"{statistics.median(rejoins[1:]):.1f} s")


def test_device_runner_kill9_cycles_answer_every_acknowledged_action_once(
        tmp_path: Path, chaos_figures: ChaosFigures) -> None:
    log = tmp_path / "runner.log"
    answers: Counter[str] = Counter()
    with LocalBroker.on_free_port(tmp_path / "broker") as broker:
        actions, observations = TOPICS["flywheel.actions"], TOPICS["flywheel.observations"]
        create_topics(broker.bootstrap, [actions, observations], with_dlq=True)
        env = _env(KAFKA_BOOTSTRAP_SERVERS=broker.bootstrap, FLYWHEEL_DATA_DIR=str(tmp_path),
                   FLYWHEEL_DEVICE_RUNNER_DEVICE_ID="sim-0",
                   FLYWHEEL_DEVICE_RUNNER_START_FROM="earliest",
                   FLYWHEEL_DEVICE_RUNNER_GROUP_ID=f"chaos-{uuid.uuid4().hex[:6]}",
                   FLYWHEEL_DEVICE_RUNNER_POLL_TIMEOUT_MS="100")
        reader = TypedBatchConsumer(broker.bootstrap, [observations], None,
                                    client_id="chaos-reader")
        traffic = Traffic(broker.bootstrap, actions,
                          lambda i: request("sim-0", f"ep-{i // 3}", i % 3), rate=100).start()

        def read() -> int:
            answers.update(r.event.event_id for r in reader.poll_batch(100))
            return sum(answers.values())

        process = _spawn(["services.device_runner"], env, log)
        try:
            for _ in range(2):
                seen = read()
                _wait(lambda s=seen: read() > s + 20, "answers", log, process)
                process.send_signal(signal.SIGKILL)
                process.wait(30)
                process = _spawn(["services.device_runner"], env, log)
            seen = read()
            _wait(lambda s=seen: read() > s + 20, "answers after the last restart", log,
                  process)
            traffic.stop()
            expected = {response_id(traffic.events[i]): i for i in traffic.acked_ids()}
            _wait(lambda: read() >= 0 and set(expected) <= set(answers),
                  "an answer to every acknowledged action", log, process)
        finally:
            process.send_signal(signal.SIGTERM)
            code = process.wait(60)
            reader.close()
    assert code == 0, log.read_text()[-3000:]
    lost = set(expected) - set(answers)
    redelivered = sum(n - 1 for a, n in answers.items() if a in expected)
    assert not lost
    chaos_figures.record(
        "device runner (2 x kill -9)", acknowledged=len(expected), lost=len(lost),
        duplicated=0, **{"dead-lettered": 0},
        note=f"{redelivered} answers re-sent under the same id (one per action in any sink)")


def _run(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[bytes]:
    return _spawn(["services.cli.main", "run", "--sim-devices", "0", "--examples", "0", *args],
                  env, log)


def _run_setup(tmp_path: Path) -> tuple[Path, str, ArchiveStore, Path, dict[str, str]]:
    """A fresh data dir and broker port for `flywheel run`: the data dir, the bootstrap, the
    archive store, the run's log file and its environment."""
    data_dir, port = tmp_path / "var", free_port()
    store = ArchiveStore(data_dir / "archive")
    env = _env(FLYWHEEL_DATA_DIR=str(data_dir), FLYWHEEL_BROKER_PORT=str(port))
    return data_dir, f"127.0.0.1:{port}", store, tmp_path / "run.log", env


def _wait_for_run(bootstrap: str, store: ArchiveStore, log: Path,
                  process: subprocess.Popen[bytes]) -> None:
    _wait(lambda: kafka_answers(bootstrap) and "flywheel.tasks" in list_topics(bootstrap),
          "the run's topics", log, process)


def test_broker_kill9_under_run_is_noticed_in_one_sentence_and_loses_at_most_the_bound(
        tmp_path: Path, chaos_figures: ChaosFigures) -> None:
    data_dir, bootstrap, store, log, env = _run_setup(tmp_path)
    run = _run(env, log, "--duration", str(WAIT_S))
    try:
        _wait_for_run(bootstrap, store, log, run)
        traffic = Traffic(bootstrap, TASKS, task).start()
        _wait(lambda: len(_archived(store)) > 500, "archiving", log, run)
        pid = json.loads((data_dir / "broker.json").read_text())["pid"]
        os.kill(pid, signal.SIGKILL)
        killed_at = time.monotonic()
        code = run.wait(30)
        noticed_s = time.monotonic() - killed_at
        traffic.stop(15)
    finally:
        if run.poll() is None:
            run.kill()
    output = log.read_text(errors="replace")
    assert code == 1, output[-3000:]
    assert "died" in output and "Traceback" not in output, output[-3000:]
    assert len(output) < 20_000, "client errors flood the output"
    acked = traffic.acked
    archived = set(_archived(store))
    lost = {i for i in acked if i not in archived}
    late = [killed_at - acked[i] for i in lost]
    assert all(age <= FLUSH_S + POLL_SLACK_S for age in late), sorted(late)[-5:]
    assert len(_archived(store)) == len(archived)
    chaos_figures.record(
        "flywheel run, broker kill -9", acknowledged=len(acked), lost=len(lost), duplicated=0,
        **{"dead-lettered": 0},
        note=f"noticed, stopped in {noticed_s:.1f} s; lost events acked ≤ "
             f"{max(late, default=0):.2f} s before the kill (bound {FLUSH_S} s + poll)")


def test_run_kill9_keeps_the_broker_and_the_next_run_archives_everything(
        tmp_path: Path, chaos_figures: ChaosFigures) -> None:
    _, bootstrap, store, log, env = _run_setup(tmp_path)
    first = _run(env, log, "--duration", str(WAIT_S))
    second = None
    try:
        _wait_for_run(bootstrap, store, log, first)
        traffic = Traffic(bootstrap, TASKS, task).start()
        _wait(lambda: len(_archived(store)) > 500, "archiving", log, first)
        first.send_signal(signal.SIGKILL)
        first.wait(30)
        time.sleep(0.5)  # traffic goes on into the broker the dead run left
        traffic.stop()
        acked = traffic.acked_ids()
        archived_at_kill = _archived(store)
        at_kill = len(set(archived_at_kill))
        assert kafka_answers(bootstrap), "the broker died with the run"
        second = _run(env, log, "--duration", "6")
        code = second.wait(WAIT_S)
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.kill()
    output = log.read_text(errors="replace")
    assert code == 0, output[-3000:]
    words = " ".join(output.split())
    assert "did not stop cleanly" in words and "nothing is lost" in words, output[-3000:]
    # The count is measured on the kept broker, not the dead run's last record (which said 0 for
    # a run killed 2 s after its last write): at least every acknowledged event not archived then.
    reported = re.search(r"so the ([\d,]+) records on it past the archive's watermarks are archived", words)
    assert reported is not None, output[-3000:]
    total = re.search(r"│ total │ ([\d,]+) │", words)  # the run's own count of what it archived
    assert total is not None, output[-3000:]
    unarchived = len(acked - set(archived_at_kill))
    said, archived_now = int(reported.group(1).replace(",", "")), int(total.group(1).replace(",", ""))
    assert said > 0 and unarchived > 0, output[-3000:]
    for truth in (archived_now, unarchived):  # within a few records of both (a record at the kill)
        assert abs(said - truth) <= max(3, truth // 50), (said, archived_now, unarchived, output[-3000:])
    ids = _archived(store)
    lost, duplicated = acked - set(ids), len(ids) - len(set(ids))
    assert not lost and duplicated == 0
    assert not kafka_answers(bootstrap), "the adopted broker was not stopped"
    chaos_figures.record(
        "flywheel run kill -9 + restart", acknowledged=len(acked), lost=len(lost),
        duplicated=duplicated, **{"dead-lettered": 0},
        note=f"{len(acked) - at_kill} unarchived at the kill, archived by the next run")
