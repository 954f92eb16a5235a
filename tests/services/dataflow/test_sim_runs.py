"""The simulator runs once per episode in the data flywheel: the four services as real
processes on a real broker, every SimPhone reset in any of them counted (a `sitecustomize` on
the services' path wraps `SimPhone.reset`, so no service knows it is counted; a new phone's
reset to the default task at construction is not an episode and not counted).

With the oracle policy every episode succeeds, and the rollout's episode is the oracle's check of
its task, so the only sim runs are the rollout's, one per episode, and the generator's oracle run
of each composition it tries (its own construction, which no suite test plays): for template
instances and rephrasings the generator checks what needs no simulator (the start state loads and
is not already solved), the verifier scores the recorded
final state and the curator builds rows from the recorded contexts. A service that replays an
episode fails this test. With any other policy the generator plays the oracle once per task it
tries (`test_the_generator_plays_the_oracle_only_where_the_rollout_does_not`)."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path

import pytest

from devices.kit.apps import DEFAULT_TASK
from devices.suite.scoring import COMPOSED_PREFIX
from schemas.tasks import TaskProposed
from schemas.topics import TOPICS
from services.cli.loop_run import DataLoop
from streams.admin import create_topics
from streams.broker import LocalBroker
from streams.consumer import TypedBatchConsumer

pytestmark = pytest.mark.integration

#: Guards against hangs only; not a speed assertion.
WAIT_S = 240.0
TASKS = 24

COUNTER = '''
"""Counts SimPhone resets in this process into $FLYWHEEL_TEST_RESETS (one JSON line each)."""
import json, os, sys

def _count():
    from devices.sim.phone import SimPhone
    reset = SimPhone.reset

    def counted(self, task):
        with open(os.environ["FLYWHEEL_TEST_RESETS"], "a") as out:
            out.write(json.dumps({"argv": sys.argv, "task": task.task_id}) + "\\n")
        return reset(self, task)

    SimPhone.reset = counted

if os.environ.get("FLYWHEEL_TEST_RESETS"):
    _count()
'''


def _service(argv: list[str]) -> str:
    """The service a counted process runs (`python -m services.orphan_guard services.<name>`)."""
    for word in argv:
        if word.startswith("services.") and word != "services.orphan_guard":
            return word.split(".")[1]
        if "/services/" in word and word.endswith("__main__.py"):
            return Path(word).parent.name
    return " ".join(argv)


def _tasks(bootstrap: str) -> list[TaskProposed]:
    with TypedBatchConsumer(bootstrap, [TOPICS["flywheel.tasks"]], "test-sim-runs") as consumer:
        return [r.event for batch in consumer.iter_batches(500, commit=False, stop_after_idle_polls=20)
                for r in batch]


def test_the_sim_runs_once_per_episode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(COUNTER)
    resets = tmp_path / "resets.jsonl"
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.setenv("FLYWHEEL_TEST_RESETS", str(resets))
    with LocalBroker.on_free_port(tmp_path / "broker") as broker:
        create_topics(broker.bootstrap, TOPICS.values())
        loop = DataLoop(broker.bootstrap, tmp_path / "var", TASKS,
                        env={"FLYWHEEL_GENERATOR_MAX_TASKS": str(TASKS),
                             "FLYWHEEL_GENERATOR_QUEUE_DEPTH": "8"})
        with loop:
            deadline = time.monotonic() + WAIT_S
            while loop.progress.verdicts < TASKS:
                assert time.monotonic() < deadline and not loop.dead(), loop.status()
                time.sleep(0.2)
            time.sleep(2.0)  # the curator and verifier finish what they have read
        episodes, failed = loop.progress.episodes, loop.progress.verdicts - loop.progress.passed
        tasks = _tasks(broker.bootstrap)
    runs = [r for r in map(json.loads, resets.read_text().splitlines())
            if r["task"] != DEFAULT_TASK.task_id]  # a new SimPhone's own start, not an episode
    by_service = Counter(_service(r["argv"]) for r in runs)
    assert episodes == TASKS and failed == 0 and len(tasks) == TASKS
    assert by_service["rollout"] == episodes, by_service
    assert set(by_service) <= {"generator", "rollout"}, by_service
    rollout = Counter(r["task"] for r in runs if _service(r["argv"]) == "rollout")
    assert rollout == Counter(t.task_id for t in tasks)  # each task's episode, once
    played = {r["task"] for r in runs if _service(r["argv"]) == "generator"}
    composed = {t.task_id for t in tasks if t.origin == "composed"}
    assert composed and composed <= played, (composed, played)  # compositions are played first …
    assert all(task_id.startswith(COMPOSED_PREFIX) for task_id in played), played  # … nothing else


def test_the_generator_plays_the_oracle_only_where_the_rollout_does_not(tmp_path: Path) -> None:
    """`flywheel run`'s loop turns the generator's own oracle run off only for the oracle policy;
    a model's rollout gets tasks the generator has seen the oracle solve."""
    assert DataLoop("127.0.0.1:1", tmp_path, 1).child_env()["FLYWHEEL_GENERATOR_ORACLE_CHECK"] == "false"
    model = DataLoop("127.0.0.1:1", tmp_path, 1, policy="pkg.mod:Model").child_env()
    assert model.get("FLYWHEEL_GENERATOR_ORACLE_CHECK") == os.environ.get("FLYWHEEL_GENERATOR_ORACLE_CHECK")
    explicit = DataLoop("127.0.0.1:1", tmp_path, 1, env={"FLYWHEEL_GENERATOR_ORACLE_CHECK": "true"})
    assert explicit.child_env()["FLYWHEEL_GENERATOR_ORACLE_CHECK"] == "true"
