"""Failures into the model side, on the real broker: the curator reads tasks, episodes,
verdicts and failure traces from topics, its review requests and decisions go round through
topics, and its Parquet snapshots hold corrections at the configured share, each row naming
the `failure.traced` event (and its topic position) it came from, queryable in DuckDB and read
by the trainer. Share 0 holds none; a trace the oracle cannot continue is skipped with a
logged reason; a bad share stops the service at start-up naming its variable."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from devices.blobs import BlobStore
from schemas.envelope import Event
from schemas.topics import Topic
from schemas.verdicts import FailureTraced
from services.curator.service import CuratorService
from services.dataflow.corrections import corrections_needed
from services.dataflow.ids import derived_id
from services.dataflow.runner import Runner
from services.dataflow.store import EventStore, Stored
from services.dataflow.tasks import new_harness
from services.dataflow.views import attach_snapshots
from services.verifier.decide import VerifierState, World
from services.verifier.decide import decide as verify_episode
from services.verifier.decide import evolve as verifier_evolve
from streams.consumer import TypedBatchConsumer
from streams.producer import TypedProducer
from tests.services.dataflow.helpers import proposed, roll

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
#: Only a guard against a hung test.
DEADLINE_S = 120.0
SHARE = 0.2
INPUTS = ("flywheel.tasks", "flywheel.episodes", "flywheel.verdicts", "flywheel.failures")


class Events:
    """Tasks rolled out (oracle demonstrations, random failures) and verified in process: the
    events a generator, a rollout and a verifier would have published."""

    def __init__(self, blobs: Path) -> None:
        self.blobs = blobs
        self.world = World(BlobStore(blobs), new_harness("v"))
        self.verifier = VerifierState()

    def episode(self, task, policy: str) -> list[tuple[str, Event]]:  # type: ignore[no-untyped-def]
        self.verifier = verifier_evolve(self.verifier, task)
        started, ended = roll(task, self.blobs, policy=policy)
        out = [("flywheel.tasks", task), ("flywheel.episodes", started),
               ("flywheel.episodes", ended)]
        for event in verify_episode(self.verifier, ended, self.world):
            out.append(("flywheel.verdicts" if event.type == "verdict.issued"
                        else "flywheel.failures", event))
        return out


class Curator:
    """A CuratorService behind the real Runner, fed by a consumer of the broker's topics."""

    def __init__(self, bootstrap: str, topics: dict[str, Topic], tmp: Path, *,
                 share: float, snapshot_examples: int) -> None:
        self.service = CuratorService(tmp / "snapshots", tmp / "blobs", topics=topics,
                                      snapshot_examples=snapshot_examples,
                                      correction_share=share)
        self.producer = TypedProducer(bootstrap, client_id="test-curator")
        self.runner = Runner(self.service, EventStore(tmp / "curator.db"), self.producer)
        self.consumer = TypedBatchConsumer(bootstrap, list(self.service.inputs),
                                           f"curator-{uuid.uuid4().hex[:8]}")

    def until(self, condition: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + DEADLINE_S
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            items = [Stored(r.event, r.topic, r.partition, r.offset)
                     for r in self.consumer.poll_batch(200) if r.event is not None]
            if items:
                self.runner.process(items)
                self.consumer.commit()

    def close(self) -> None:
        self.consumer.close()
        self.producer.close()
        self.runner.store.close()


def _publish(bootstrap: str, topics: dict[str, Topic], events: list[tuple[str, Event]]) -> None:
    with TypedProducer(bootstrap, client_id="test-loop") as producer:
        for name, event in events:
            producer.send(topics[name], event)


def _settled(curator: Curator, episodes: list[str]) -> Callable[[], bool]:
    """Every episode assessed, and no candidate still waiting for its review decision."""
    def check() -> bool:
        status = curator.service.state.status
        return all(e in status and status[e] not in ("candidate", "review") for e in episodes)
    return check


def _snapshot_rows(curator: Curator) -> list[tuple[dict, list[dict]]]:
    root = curator.service.snapshot_dir
    return [(json.loads((d / "manifest.json").read_text()),
             pq.read_table(d / "data.parquet").to_pylist())
            for d in sorted(p for p in root.iterdir() if (p / "manifest.json").exists())]


@pytest.fixture(scope="module")
def flywheel_events(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list]:
    """Random-policy failures (most recoverable by the oracle), two traces the oracle cannot
    continue (a forged first wrong step past the episode, a task whose instance no longer
    reads), and oracle demonstrations."""
    maker = Events(tmp_path_factory.mktemp("blobs"))
    failing = [maker.episode(proposed(i=0, template=t), "random") for t in range(10)]
    failures = [e for events in failing for _, e in events if isinstance(e, FailureTraced)]
    assert sum(f.step_index is not None for f in failures) >= 6
    # A forged trace: its first wrong step lies past the end of its episode.
    forged_events = maker.episode(proposed(i=3, template=1), "random")
    past = next(e for _, e in forged_events if isinstance(e, FailureTraced))
    steps = next(e for _, e in forged_events if e.type == "episode.ended").steps
    forged = past.model_copy(update={"step_index": len(steps) + 5,
                                     "event_id": derived_id("forged", past.event_id)})
    forged_events = [(n, forged if e is past else e) for n, e in forged_events]
    # A task whose embedded instance is unreadable by the time the curator replays it.
    broken_events = maker.episode(proposed(i=4, template=2), "random")
    trace = next(e for _, e in broken_events if isinstance(e, FailureTraced))
    assert trace.step_index is not None
    broken_events = [(n, e.model_copy(update={"instance": {"task_id": e.task_id}})
                      if e.type == "task.proposed" else e) for n, e in broken_events]
    demos = [maker.episode(proposed(i=i, template=t), "oracle") for t in range(4)
             for i in (1, 2)]
    return {"failing": [*failing, forged_events, broken_events], "demos": demos,
            "skipped": [forged.event_id, trace.event_id]}


def _episode_ids(groups: list[list[tuple[str, Event]]]) -> list[str]:
    return [e.episode_id for events in groups for _, e in events if e.type == "episode.ended"]


def test_snapshots_hold_corrections_at_the_share_each_traceable_to_its_failure(
        bootstrap: str, fresh_topic, tmp_path: Path, flywheel_events,
        caplog: pytest.LogCaptureFixture) -> None:
    topics = {name: fresh_topic(name) for name in (*INPUTS, "flywheel.reviews",
                                                   "flywheel.datasets")}
    curator = Curator(bootstrap, topics, tmp_path, share=SHARE, snapshot_examples=12)
    caplog.set_level(logging.INFO, logger="services.curator.corrections")
    try:
        # Failures first, settled (reviewed and admitted) before any demonstration arrives,
        # so every snapshot can draw on all of them.
        _publish(bootstrap, topics, [x for g in flywheel_events["failing"] for x in g])
        curator.until(_settled(curator, _episode_ids(flywheel_events["failing"])),
                      "the failures to be assessed")
        state = curator.service.state
        admitted_fixes = [e for e in state.admitted if e in state.corrections]
        assert len(admitted_fixes) >= 3, "random episodes the oracle can recover from"
        available = sum(state.corrections[e] for e in admitted_fixes)
        assert not curator.service.state.snapshots, "corrections alone fill no snapshot"
        # The two traces the oracle cannot continue: skipped with their reasons, no crash.
        for failure_id in flywheel_events["skipped"]:
            episode_id = next(f.episode_id for f in state.failures.values()
                              if f.event_id == failure_id)
            assert state.status[episode_id] == "dropped:no_correction"
        logged = " ".join(r.getMessage() for r in caplog.records)
        skipped = flywheel_events["skipped"]
        assert f"failure {skipped[0]}" in logged and "past the episode" in logged
        assert f"failure {skipped[1]}" in logged and "replaying it failed" in logged

        _publish(bootstrap, topics, [x for g in flywheel_events["demos"] for x in g])
        curator.until(lambda: _settled(curator, _episode_ids(flywheel_events["demos"]))()
                      and len(curator.service.state.snapshots) >= 2, "two snapshots")
    finally:
        curator.close()

    failures = {f.event_id: f for f in curator.service.state.failures.values()}
    for manifest, rows in _snapshot_rows(curator):
        demos = [r for r in rows if r["kind"] == "demonstration"]
        fixes = [r for r in rows if r["kind"] == "correction"]
        print(f"\nsnapshot {manifest['snapshot_id']}: {len(demos)} demonstration rows, "
              f"{len(fixes)} correction rows from {len(manifest['corrections']['failures'])} "
              f"failures ({len(fixes) / len(rows):.3f} of {len(rows)}; {available} available)")
        # The share, within rounding (all of them when too few: not the case here).
        assert len(fixes) == corrections_needed(len(demos), SHARE) <= available
        assert abs(len(fixes) / len(rows) - SHARE) <= 1 / len(rows)
        record = manifest["corrections"]
        assert record["rows"] == len(fixes) and record["rows_available"] == available
        assert record["share_wanted"] == SHARE
        assert record["share"] == pytest.approx(len(fixes) / len(rows), abs=1e-6)
        assert manifest["counts"]["correction_rows"] == len(fixes)
        # Each row names its failure trace and where it sits on the failures topic.
        for row in fixes:
            trace = failures[row["failure_event_id"]]
            assert trace.episode_id == row["episode_id"]
            assert row["failure_topic"] == topics["flywheel.failures"].name
            assert row["failure_offset"] is not None and row["failure_partition"] is not None
            assert row["policy"] == "oracle after random"
        assert all(r["failure_event_id"] is None for r in demos)
        held = {(f["failure_event_id"], f["episode_id"], f["rows"]) for f in record["failures"]}
        assert held == {(f, e, sum(1 for r in fixes if r["failure_event_id"] == f))
                        for f, e in {(r["failure_event_id"], r["episode_id"]) for r in fixes}}
        assert not set(skipped) & {f for f, _, _ in held}

    # DuckDB: which corrections a snapshot holds, from the manifests and from the rows.
    con = duckdb.connect()
    attach_snapshots(con, curator.service.snapshot_dir)
    per_manifest = con.execute("SELECT snapshot_id, failure_event_id, rows FROM "
                               "snapshot_corrections ORDER BY ALL").fetchall()
    per_row = con.execute("SELECT snapshot_id, failure_event_id, count(*) FROM examples WHERE "
                          "kind = 'correction' GROUP BY ALL ORDER BY ALL").fetchall()
    assert per_manifest == per_row and per_manifest
    assert {f for _, f, _ in per_manifest} <= set(failures)

    # The trainer reads the correction rows like any other.
    from trainer.data import read_snapshot, render_examples
    from trainer.models import build_tiny, load_model

    tokenizer = load_model(build_tiny(tmp_path / "tiny", seed=0)).tokenizer
    folder = Path(curator.service.snapshot_dir) / per_manifest[0][0]
    examples, skipped_rows = render_examples(read_snapshot(folder), tokenizer)
    assert skipped_rows == 0 and len(examples) == pq.read_metadata(folder / "data.parquet").num_rows


def test_share_zero_leaves_the_corrections_out(bootstrap: str, fresh_topic, tmp_path: Path,
                                               flywheel_events) -> None:
    topics = {name: fresh_topic(name) for name in (*INPUTS, "flywheel.reviews",
                                                   "flywheel.datasets")}
    curator = Curator(bootstrap, topics, tmp_path, share=0.0, snapshot_examples=12)
    try:
        groups = flywheel_events["failing"] + flywheel_events["demos"]
        _publish(bootstrap, topics, [x for g in groups for x in g])
        curator.until(lambda: _settled(curator, _episode_ids(groups))()
                      and len(curator.service.state.snapshots) >= 1, "a snapshot")
    finally:
        curator.close()
    state = curator.service.state
    assert any(e in state.corrections for e in state.admitted), "corrections were admitted"
    for manifest, rows in _snapshot_rows(curator):
        assert rows and all(r["kind"] == "demonstration" for r in rows)
        assert manifest["corrections"]["rows"] == 0 and manifest["corrections"]["failures"] == []


@pytest.mark.parametrize("bad", ["1.0", "-0.1", "a fifth"])
def test_a_bad_share_stops_the_curator_at_start_up_naming_the_variable(bad: str) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("FLYWHEEL_", "KAFKA_"))}
    result = subprocess.run([sys.executable, "-m", "services.curator"], cwd=ROOT,
                            env={**clean, "PYTHONPATH": str(ROOT),
                                 "FLYWHEEL_CURATOR_CORRECTION_SHARE": bad},
                            capture_output=True, text=True, timeout=60, check=False)
    output = " ".join((result.stdout + result.stderr).split())
    assert result.returncode == 2, output
    assert "FLYWHEEL_CURATOR_CORRECTION_SHARE" in output and "Traceback" not in output
