"""The curator: assessment (drops by reason), the admission seam, snapshots with lineage and
the train-only check (with planted dev and test instances)."""

from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from devices.blobs import BlobStore
from devices.harness.answer import parse_completion
from devices.harness.context import CONTEXT_VERSION
from schemas.actions import parse_action
from schemas.reviews import ReviewDecided
from services.curator.decide import CuratorState, decide, evolve
from services.curator.service import CuratorService
from services.curator.snapshot import COLUMNS, HeldOutLeak, build_rows, check_train_only
from services.dataflow.admission import Admission, AutoAdmission, OncePerEvent, Rejection
from services.dataflow.tasks import new_harness
from services.verifier.decide import VerifierState, World
from services.verifier.decide import decide as verify_episode
from services.verifier.decide import evolve as verifier_evolve
from tests.services.dataflow.helpers import Offsets, proposed, roll

POLICY = AutoAdmission()


class Pipeline:
    """Tasks → rollout → verifier → curator, in process, with offsets like a broker's."""

    def __init__(self, tmp: Path, snapshot_examples: int = 10_000) -> None:
        self.blobs = tmp / "blobs"
        self.verifier_world = World(BlobStore(self.blobs), new_harness("v"))
        self.verifier = VerifierState()
        self.curator = CuratorService(tmp / "snapshots", self.blobs,
                                      snapshot_examples=snapshot_examples)
        self.offsets = Offsets()
        self.snapshots = []
        self.log = []  # every event the curator folded, in order (what its store would hold)

    def deliver(self, topic: str, event) -> None:  # type: ignore[no-untyped-def]
        stored = self.offsets.stored(topic, event)
        queue = [(t.name, e) for t, e in self.curator.handle(stored)]
        self.curator.apply(stored)
        self.log.append(stored)
        for name, out in queue:
            if out.type == "dataset.snapshotted":
                self.snapshots.append(out)
            self.deliver(name, out)

    def run(self, task, policy: str = "oracle", mutate=None) -> str:  # type: ignore[no-untyped-def]
        self.verifier = verifier_evolve(self.verifier, task)
        self.deliver("flywheel.tasks", task)
        started, ended = roll(task, self.blobs, policy=policy)
        if mutate is not None:
            ended = mutate(ended)
        self.deliver("flywheel.episodes", started)
        self.deliver("flywheel.episodes", ended)
        for out in verify_episode(self.verifier, ended, self.verifier_world):
            self.deliver("flywheel.verdicts" if out.type == "verdict.issued"
                         else "flywheel.failures", out)
        return ended.episode_id

    @property
    def state(self) -> CuratorState:
        return self.curator.state


def test_passing_episodes_are_reviewed_admitted_and_snapshotted_with_lineage(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path, snapshot_examples=6)
    ids = [pipe.run(proposed(i=i, template=t)) for t in range(3) for i in range(2)]
    # (two instances of one template can share their action sequence: a duplicate)
    assert {pipe.state.status[e] for e in ids} <= {"admitted", "dropped:duplicate"}
    assert sum(pipe.state.status[e] == "admitted" for e in ids) >= 4
    assert pipe.snapshots, "a snapshot is written once 6 rows are admitted"
    snap = pipe.snapshots[0]
    folder = Path(snap.path)
    table = pq.read_table(folder / "data.parquet")
    assert table.column_names == list(COLUMNS)
    assert snap.rows == table.num_rows >= 6
    rows = table.to_pylist()
    assert all(r["split"] == "train" and r["prompt"] and r["completion"] for r in rows)
    assert all(parse_completion(r["completion"]).action_type == r["action_type"] for r in rows)
    assert len({r["example_id"] for r in rows}) == len(rows)
    for what in ("task", "episode", "verdict", "decision"):
        assert all(r[f"{what}_event_id"] and r[f"{what}_offset"] is not None for r in rows)
    assert all(r["admission_policy"].startswith("automatic stand-in") for r in rows)
    assert snap.admission_policy.startswith("automatic stand-in")
    manifest = json.loads((folder / "manifest.json").read_text())
    import hashlib
    assert snap.files["data.parquet"] == hashlib.sha256(
        (folder / "data.parquet").read_bytes()).hexdigest()
    assert manifest["composition"] == snap.composition and sum(snap.composition.values()) == snap.rows


def test_held_out_environment_fault_failed_and_duplicate_episodes_are_dropped(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path)
    kept = pipe.run(proposed(i=0))
    dev = pipe.run(proposed(split="dev", i=0))
    fault = pipe.run(proposed(i=1), mutate=lambda e: e.model_copy(update={
        "outcome": "device_failed", "failure": "adb went away"}))
    failed = pipe.run(proposed(i=2), policy="noop")
    # The same task again under another id: an exact duplicate action sequence.
    again = proposed(i=0)
    dup_task = again.model_copy(update={"task_id": again.task_id + "-again",
                                        "event_id": "dup" + again.event_id[3:],
                                        "instance": {**again.instance,
                                                     "task_id": again.task_id + "-again"}})
    duplicate = pipe.run(dup_task)
    status = pipe.state.status
    assert status[kept] == "admitted"
    assert status[dev] == "dropped:held_out_split"
    assert status[fault] == "dropped:environment_fault"
    # A failure with a first wrong step is a correction candidate (the oracle continues).
    assert failed in pipe.state.corrections and status[failed] == "admitted"
    assert status[duplicate] == "dropped:duplicate"
    counts = pipe.state.counts
    assert counts["dropped:duplicate"] == 1 and counts["failure:environment_fault"] == 1


def test_only_decisions_the_policy_verifies_admit_rows(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path)
    # A policy that never decides by itself: requests wait for a person.
    manual = AutoAdmission()
    manual.decides_requests = False  # type: ignore[misc]
    pipe.curator.policy = OncePerEvent(manual)
    episode = pipe.run(proposed(i=4))
    assert pipe.state.status[episode] == "review" and pipe.state.review_queue == 1
    review_id = next(iter(pipe.state.reviews))
    forged = ReviewDecided(source="someone/0", correlation_id="c", review_id=review_id,
                           decision="approved", reviewer="mallory", approved_ids=[episode])
    assert isinstance(manual.verify(forged), Rejection)
    pipe.deliver("flywheel.reviews", forged)
    assert pipe.state.status[episode] == "rejected" and not pipe.state.admitted
    ok = forged.model_copy(update={"reviewer": "auto-admission", "event_id": "x" * 32})
    assert isinstance(manual.verify(ok), Admission)


def test_a_planted_dev_or_test_instance_stops_the_snapshot(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path)
    episode = pipe.run(proposed(i=0))
    rows = build_rows(pipe.state, [episode], POLICY.name)
    task = pipe.state.tasks[pipe.state.episodes[episode][0].task_id][0]
    instances = {task.task_id: {"template": task.template, "params": task.params,
                                "goal": task.goal}}
    check_train_only(rows, instances)  # the honest rows pass
    planted = [{**rows[0], "split": "dev", "example_id": "planted:0"}]
    with pytest.raises(HeldOutLeak, match="dev instance"):
        check_train_only(rows + planted, instances)
    # Labelled train but carrying test-pool parameters: caught by the pools.
    test_task = proposed(split="test", i=0)
    disguised = [{**rows[0], "task_id": test_task.task_id, "example_id": "planted:1"}]
    with pytest.raises(HeldOutLeak, match="mentions test value"):
        check_train_only(rows + disguised, {
            **instances, test_task.task_id: {"template": test_task.template,
                                             "params": test_task.params,
                                             "goal": test_task.goal}})



def test_a_train_task_carrying_a_held_out_value_is_dropped_before_any_snapshot(
        tmp_path: Path) -> None:
    from services.dataflow.heldout import held_out_mentions, task_text

    pipe = Pipeline(tmp_path)
    task = proposed(i=0)
    test_value = proposed(split="test", i=0).goal  # a goal built from test-pool values
    assert held_out_mentions(task_text(test_value, {}))
    leaky = task.model_copy(update={"goal": f"{task.goal} ({test_value})",
                                    "event_id": "leaky" + task.event_id[5:]})
    episode = pipe.run(leaky)
    assert pipe.state.status[episode] == "dropped:held_out_value"
    assert not held_out_mentions(task_text(task.goal, task.params))


def test_rows_pair_the_context_with_the_next_action(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path)
    episode = pipe.run(proposed(i=3))
    rows = build_rows(pipe.state, [episode], POLICY.name)  # no harness: from the rollout's record alone
    assert rows and all(r["context_version"] == CONTEXT_VERSION for r in rows)
    first = json.loads(rows[0]["prompt"])
    assert len(first) == 1 and first[0]["content"].startswith("Goal:")
    for earlier, later in itertools.pairwise(rows):
        history = json.loads(later["prompt"])
        assert history[:-2] == json.loads(earlier["prompt"])  # history grows step by step
        assert parse_completion(earlier["completion"]) == parse_action(
            {**history[-2]["tool_calls"][0]["function"]["arguments"],
             "action_type": history[-2]["tool_calls"][0]["function"]["name"]})
    decision = evolve(pipe.state, pipe.offsets.stored("flywheel.reviews", ReviewDecided(
        source="x/0", correlation_id="c", review_id="unknown", decision="approved",
        reviewer="auto-admission")), POLICY)
    assert decision.counts["decisions_for_unknown_reviews"] == 1
    assert decide(pipe.state, pipe.offsets.stored("flywheel.reviews", ReviewDecided(
        source="x/0", correlation_id="c", review_id="unknown", decision="approved",
        reviewer="auto-admission")), POLICY) == []


def test_snapshots_are_duckdb_views_joined_to_their_lineage(tmp_path: Path) -> None:
    import duckdb

    from services.dataflow.views import attach_snapshots

    con = duckdb.connect()
    assert attach_snapshots(con, tmp_path / "snapshots") == []  # nothing yet: no views
    pipe = Pipeline(tmp_path, snapshot_examples=3)
    for i in range(3):
        pipe.run(proposed(i=i, template=i))
    assert attach_snapshots(con, tmp_path / "snapshots") == ["examples", "snapshots",
                                                             "snapshot_corrections"]
    snap = pipe.snapshots[0]
    assert con.execute("SELECT count(*) FROM examples WHERE snapshot_id = ?",
                       [snap.snapshot_id]).fetchone()[0] == snap.rows
    assert con.execute("SELECT rows FROM snapshots WHERE snapshot_id = ?",
                       [snap.snapshot_id]).fetchone()[0] == snap.rows


def test_failures_with_an_oracle_continuation_become_corrections(tmp_path: Path) -> None:
    pipe = Pipeline(tmp_path, snapshot_examples=2)
    corrected = []
    for template in range(12):
        episode = pipe.run(proposed(i=0, template=template), policy="random")
        if episode in pipe.state.corrections:
            corrected.append(episode)
    pipe.run(proposed(i=1, template=0))  # a demonstration, so a snapshot is due
    assert corrected, "some random episodes fail at a step the oracle can recover from"
    assert all(pipe.state.status[e] == "admitted" for e in corrected)
    rows = pq.read_table(Path(pipe.snapshots[-1].path) / "data.parquet").to_pylist()
    fixes = [r for r in rows if r["kind"] == "correction"]
    assert fixes and {r["episode_id"] for r in fixes} <= set(corrected)
    assert all(r["policy"] == "oracle after random" for r in fixes)
    assert pipe.snapshots[-1].counts["correction_rows"] == len(fixes)
    # Each correction's actions solve its task from the failing state.
    from services.curator.examples import correction_pairs
    from services.dataflow.tasks import instance_of
    episode = pipe.state.episodes[fixes[0]["episode_id"]][0]
    task = instance_of(pipe.state.tasks[episode.task_id][0])
    start, pairs = correction_pairs(task, episode.steps,
                                    pipe.state.failures[episode.episode_id].step_index,
                                    new_harness())
    mine = [r for r in fixes if r["episode_id"] == episode.episode_id]
    # (the snapshot holds a sample of the corrections' rows, at the configured share)
    assert mine and all(r["completion"] == pairs[r["step_index"] - start][1] for r in mine)
    assert all(r["failure_event_id"] == pipe.state.failures[episode.episode_id].event_id
               for r in mine)


def test_the_gates_admission_policy_plugs_into_the_seam(tmp_path: Path) -> None:
    """GateAdmission (services.gate) as the curator's policy: it admits verified successes by
    itself except what a person must see, and with no gate key no person can admit anything."""
    from services.dataflow.admission_policy import AdmissionPolicy, PolicySettings
    from services.dataflow.gate_admission import GateAdmission
    from services.dataflow.verify import DecisionVerifier

    def gate() -> GateAdmission:
        settings = PolicySettings(audit_rate=0.3, new_template_threshold=0)
        return GateAdmission(DecisionVerifier(None), AdmissionPolicy(settings))

    pipe = Pipeline(tmp_path)
    pipe.curator.policy = OncePerEvent(gate())
    episodes = [pipe.run(proposed(i=i, template=t)) for t in range(4) for i in range(3)]
    status = {pipe.state.status[e] for e in episodes}
    assert "admitted" in status and "review" in status  # the audit sample waits for a person
    waiting = [e for e in episodes if pipe.state.status[e] == "review"]
    review_id = next(r for r, ids in pipe.state.reviews.items() if waiting[0] in ids)
    forged = ReviewDecided(source="someone/0", correlation_id="c", review_id=review_id,
                           decision="approved", reviewer="mallory", approved_ids=[waiting[0]])
    pipe.deliver("flywheel.reviews", forged)
    assert waiting[0] not in pipe.state.admitted  # unsigned: rejected, nothing admitted
    # A restart folds the same events through a fresh policy and reaches the same admissions.
    fresh = CuratorService(tmp_path / "s2", tmp_path / "blobs", policy=gate())
    for stored in pipe.log:
        fresh.apply(stored)
    assert set(fresh.state.admitted) == set(pipe.state.admitted)


def test_a_snapshot_reaches_its_target_however_few_corrections_there_are(tmp_path: Path) -> None:
    """Demonstrations make up for corrections that are missing: a run of the oracle alone
    (no failures) still gets snapshots of the size `flywheel run --examples` waits for."""
    from services.curator.snapshot import snapshot_rows_ready, write_snapshot

    pipe = Pipeline(tmp_path)
    for template in range(6):
        for i in range(3):
            pipe.run(proposed(i=i, template=template))
    state = pipe.state
    assert not state.corrections
    ready = snapshot_rows_ready(state, 0.2)
    assert ready == sum(len(state.episodes[e][0].steps) for e in state.admitted)
    for target in (5, 11, ready // 2, ready):
        snap = write_snapshot(state, target, tmp_path / "s", BlobStore(tmp_path / "b"),
                              POLICY.name, cause="test", harness=new_harness(),
                              correction_share=0.2)
        assert snap.rows >= target and snap.counts["correction_rows"] == 0
    # With random failures in, the corrections take their share and the total still reaches it.
    for template in range(8):
        pipe.run(proposed(i=5, template=template), policy="random")
    state = pipe.state
    assert any(e in state.corrections for e in state.admitted)
    target = snapshot_rows_ready(state, 0.2)
    snap = write_snapshot(state, target, tmp_path / "s", BlobStore(tmp_path / "b"), POLICY.name,
                          cause="test", harness=new_harness(), correction_share=0.2)
    fixes = snap.counts["correction_rows"]
    assert snap.rows >= target and fixes > 0
    assert abs(fixes / snap.rows - 0.2) <= 1 / snap.rows


@pytest.mark.parametrize("share", [1.0, -0.5])
def test_a_curator_refuses_a_share_it_cannot_reach(tmp_path: Path, share: float) -> None:
    with pytest.raises(ValueError, match="FLYWHEEL_CURATOR_CORRECTION_SHARE"):
        CuratorService(tmp_path / "s", tmp_path / "b", correction_share=share)


def test_reviews_that_come_back_before_their_verdicts_after_a_crash_admit_the_same_rows(
        tmp_path: Path) -> None:
    """After a kill -9 between sending a review request and storing the verdict that caused
    it, the request (and its decision) can be read back before the redelivered verdict:
    topics are not ordered with each other. The curator must reach the same state, not
    crash on the unknown episode (found by the kill -9 test on the broker)."""
    pipe = Pipeline(tmp_path / "first", snapshot_examples=10_000)
    passing = [pipe.run(proposed(i=i, template=t)) for t in range(3) for i in range(2)]
    failing = [pipe.run(proposed(i=0, template=t), policy="random") for t in range(6)]
    log = pipe.log
    late = [s for s in log if s.topic in ("flywheel.verdicts", "flywheel.failures")]
    early = [s for s in log if s not in late]
    assert any(s.event.type == "review.decided" for s in early)

    again = CuratorService(tmp_path / "again" / "snapshots", pipe.blobs, snapshot_examples=6)
    for stored in [*early, *late]:
        again.handle(stored)  # decides (and writes a due snapshot) without a KeyError …
        again.apply(stored)
    first, second = pipe.state, again.state
    # … and ends where the in-order curator ended: same statuses, rows and duplicates.
    assert {e: second.status[e] for e in passing + failing} == \
        {e: first.status[e] for e in passing + failing}
    assert list(second.admitted) and set(second.admitted) == set(first.admitted)
    assert first.corrections and second.corrections == first.corrections
    assert second.exact == first.exact and not second.pending_admissions
    # A twin of an admitted episode that arrives now is still caught as a duplicate.
    twin = proposed(i=0)
    twin = twin.model_copy(update={"task_id": twin.task_id + "-twin",
                                   "event_id": "twin" + twin.event_id[4:],
                                   "instance": {**twin.instance,
                                                "task_id": twin.task_id + "-twin"}})
    pipe.curator = again
    duplicate = pipe.run(twin)
    assert again.state.status[duplicate] == "dropped:duplicate"


def test_an_admission_that_arrives_before_a_held_out_verdict_admits_nothing(
        tmp_path: Path) -> None:
    """A decision that names an episode the curator later finds held out never trains it."""
    pipe = Pipeline(tmp_path / "first")
    kept = pipe.run(proposed(i=0))
    request = next(s for s in pipe.log if s.event.type == "review.requested")
    decision = next(s for s in pipe.log if s.event.type == "review.decided")
    verdict = next(s for s in pipe.log if s.topic == "flywheel.verdicts")
    task = next(s for s in pipe.log if s.topic == "flywheel.tasks")
    held_out = task.event.model_copy(update={"split": "dev"})
    state = CuratorState()
    for stored in [dataclasses.replace(task, event=held_out),
                   *[s for s in pipe.log if s.topic == "flywheel.episodes"],
                   request, decision, verdict]:
        state = evolve(state, stored, pipe.curator.policy)
    assert state.status[kept] == "dropped:held_out_split"
    assert kept not in state.admitted and not state.pending_admissions


def test_the_service_folds_each_event_once_so_a_failure_is_replayed_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """handle() folds the event and apply() takes that state: the oracle's correction replay
    on the simulator (inside the fold) runs once per failing episode, not three times."""
    import services.curator.decide as curator_decide

    calls: list[str] = []
    real = curator_decide.continuation

    def counted(task, episode, failure, harness):  # type: ignore[no-untyped-def]
        calls.append(episode.episode_id)
        return real(task, episode, failure, harness)

    monkeypatch.setattr(curator_decide, "continuation", counted)
    pipe = Pipeline(tmp_path)
    failing = [pipe.run(proposed(i=0, template=t), policy="random") for t in range(4)]
    judged = [e for e in failing if e in pipe.state.corrections
              or pipe.state.status[e] in ("dropped:no_correction", "dropped:failed")]
    assert judged and sorted(calls) == sorted(set(calls)) and set(judged) <= set(calls)


def test_the_row_counts_a_snapshot_waits_for_are_kept_with_the_admissions(tmp_path: Path) -> None:
    from services.curator.decide import admitted_rows, with_row_counts
    from services.curator.snapshot import snapshot_rows_ready

    pipe = Pipeline(tmp_path)
    for t in range(4):
        pipe.run(proposed(i=0, template=t))
    state = pipe.state
    assert state.admitted and state.demonstration_rows > 0
    # folded one admission at a time, the counts equal a recount over every admitted episode
    assert (state.demonstration_rows, state.correction_rows) == admitted_rows(state, state.admitted)
    recounted = with_row_counts(dataclasses.replace(state, demonstration_rows=0, correction_rows=0))
    assert snapshot_rows_ready(recounted) == snapshot_rows_ready(state) > 0


def test_a_fold_that_fails_half_way_leaves_the_state_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The state's maps are persistent and shared between versions: a decide that raises after
    the fold wrote the episode (here while judging it) must leave the state before it intact, so
    the runner can dead-letter the event and go on, and the next fold must see none of it."""
    import services.curator.decide as curator_decide

    pipe = Pipeline(tmp_path)
    first = pipe.run(proposed(i=0, template=0))
    task = proposed(i=0, template=1)
    pipe.verifier = verifier_evolve(pipe.verifier, task)
    pipe.deliver("flywheel.tasks", task)
    _started, ended = roll(task, pipe.blobs)
    verdicts = verify_episode(pipe.verifier, ended, pipe.verifier_world)
    for out in verdicts:  # the verdict first: the episode's arrival is what gets it judged
        pipe.deliver("flywheel.verdicts" if out.type == "verdict.issued" else "flywheel.failures", out)
    before = pipe.state
    seen = (dict(before.episodes), dict(before.status), set(before.assessed), dict(before.exact))

    def broken(text: str) -> list[str]:
        raise RuntimeError("the held-out check broke")

    monkeypatch.setattr(curator_decide, "held_out_mentions", broken)
    with pytest.raises(RuntimeError, match="held-out check"):
        pipe.curator.handle(pipe.offsets.stored("flywheel.episodes", ended))
    assert pipe.state is before and ended.episode_id not in before.episodes
    assert (dict(before.episodes), dict(before.status), set(before.assessed), dict(before.exact)) == seen
    monkeypatch.undo()
    pipe.deliver("flywheel.episodes", ended)  # redelivered: folded whole this time
    assert pipe.state.status[ended.episode_id] in ("admitted", "dropped:duplicate")
    assert pipe.state.status[first] == "admitted" and ended.episode_id not in before.episodes
