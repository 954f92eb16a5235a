"""The simulator runs once per episode in the data flywheel: the four services as real
processes on a real broker, every SimPhone reset in any of them counted (a `sitecustomize` on
the services' path wraps `SimPhone.reset`, so no service knows it is counted; a new phone's
reset to the default task at construction is not an episode and not counted).

With the oracle policy every episode succeeds, so the only sim runs are the rollout's one per
episode and the generator's one oracle check per template instance it proposes (its drops
included); the verifier scores the recorded final state and the curator builds rows from the
recorded contexts, neither replays. A service that replays an episode fails this test."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest

from devices.kit.apps import DEFAULT_TASK
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
    assert by_service["verifier"] == 0 and by_service["curator"] == 0, by_service
    # One oracle check per template instance the generator tried: every proposed task once.
    generator = Counter(r["task"] for r in runs if _service(r["argv"]) == "generator")
    assert {t.task_id for t in tasks} <= set(generator) and max(generator.values()) == 1, generator
    assert set(by_service) == {"generator", "rollout"}, by_service
