"""Trainer and evaluator services: pure decisions, then snapshot → checkpoint → eval.reported over a real broker."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from devices.harness.spec import HarnessSpec
from schemas.harness import HarnessPromoted
from schemas.observations import BlobRef
from schemas.training import CheckpointSaved, DatasetSnapshotted
from services.evaluator.decide import EvaluatorState
from services.evaluator.decide import decide as decide_eval
from services.evaluator.loop import run_evaluator
from services.evaluator.settings import load_evaluator_settings
from services.trainer.decide import TrainerState, decide, evolve
from services.trainer.loop import run_trainer
from services.trainer.settings import load_trainer_settings
from streams.consumer import TypedBatchConsumer
from streams.producer import TypedProducer

ENVELOPE = {"source": "test/0", "correlation_id": "run-7"}
SHA = hashlib.sha256(b"x").hexdigest()


def _snapshot_event(path: str, kind: str = "sft", snapshot_id: str = "snap-test") -> DatasetSnapshotted:
    return DatasetSnapshotted(**ENVELOPE, snapshot_id=snapshot_id, kind=kind, path=path,
                              manifest=BlobRef(sha256=SHA, size=1), rows=7, source_event_ids_sha256=SHA)


def test_trainer_decides_one_job_per_new_snapshot_and_ignores_redelivery() -> None:
    state = TrainerState(current_model="base")
    event = _snapshot_event("/snap")
    [job] = decide(state, event)
    assert (job.stage, job.checkpoint_id, job.causation_id) == ("sft", "sft-snap-test", event.event_id)
    after = evolve(state, job, "/ckpt/sft-snap-test")
    assert after.current_model == "/ckpt/sft-snap-test"
    assert decide(after, event) == []  # the same snapshot again: nothing
    assert decide(after, _snapshot_event("/e", kind="eval", snapshot_id="other")) == []


def test_evaluator_evaluates_checkpoints_and_harness_versions_with_the_newest_checkpoint() -> None:
    saved = CheckpointSaved(**ENVELOPE, checkpoint_id="sft-1", run_id="run-7", stage="sft", step=3, base_model="b",
                            snapshot_id="s", weights=BlobRef(sha256=SHA, size=1))
    promoted = HarnessPromoted(**ENVELOPE, proposal_id="p1", harness="h2", previous="h1")
    assert decide_eval(EvaluatorState(), promoted) == []  # no checkpoint yet to run the harness with
    [job] = decide_eval(EvaluatorState(), saved)
    assert (job.subject, job.checkpoint_id) == ("checkpoint", "sft-1")
    [harness_job] = decide_eval(EvaluatorState(latest_checkpoint="sft-1"), promoted)
    assert (harness_job.subject, harness_job.subject_id, harness_job.checkpoint_id) == ("harness", "h2", "sft-1")
    assert decide_eval(EvaluatorState(done=frozenset({("checkpoint", "sft-1")})), saved) == []


def test_snapshot_event_becomes_checkpoint_then_eval_report(bootstrap: str, fresh_topic, tiny_model: Path,
                                                            oracle_snapshot: Path, tmp_path: Path) -> None:
    datasets, checkpoints = fresh_topic("flywheel.datasets"), fresh_topic("flywheel.checkpoints")
    feedback, harness, evals = fresh_topic("flywheel.feedback"), fresh_topic("flywheel.harness"), fresh_topic(
        "flywheel.evals")
    with TypedProducer(bootstrap) as producer:
        producer.send(datasets, _snapshot_event(str(oracle_snapshot))).get(timeout=30)
    trainer = load_trainer_settings(base_model=tiny_model, checkpoints_dir=tmp_path, group_id=f"tr-{datasets.name}",
                                    sft_max_steps=2)
    state = run_trainer(trainer, bootstrap, threading.Event(), datasets=datasets, checkpoints=checkpoints,
                        feedback=feedback, max_jobs=1)
    assert state.trained == {"snap-test"} and Path(state.current_model) == tmp_path / "sft-snap-test"
    reports = []
    evaluator = load_evaluator_settings(checkpoints_dir=tmp_path, group_id=f"ev-{checkpoints.name}", limit=2,
                                        max_steps=1)
    run_evaluator(evaluator, bootstrap, threading.Event(), checkpoints=checkpoints, harness=harness, evals=evals,
                  max_jobs=1, on_report=reports.append)
    with TypedBatchConsumer(bootstrap, [evals], None) as consumer:
        got = [r.event for batch in consumer.iter_batches(commit=False, stop_after_idle_polls=3) for r in batch]
    assert [e.type for e in got] == ["eval.reported"] and got == reports
    report = got[0]
    assert report.subject == "checkpoint" and report.subject_id == "sft-snap-test" and report.episodes == 2
    assert report.correlation_id == "run-7" and "overall" in report.intervals
    assert report.harness == HarnessSpec.default().version  # an empty registry: the built-in harness


def test_a_promoted_harness_is_scored_in_itself_and_a_missing_one_is_not_scored(tiny_model: Path,
                                                                                 tmp_path: Path) -> None:
    from services.dataflow.registry import HarnessRegistry
    from services.evaluator.decide import EvalJob
    from services.evaluator.loop import evaluate_job
    from trainer.models import build_tiny

    build_tiny(tmp_path / "checkpoints" / "sft-1")
    registry = HarnessRegistry(tmp_path / "harness")
    default = HarnessSpec.default()
    promoted = default.model_copy(update={"playbook": ("Read before you write.",)})
    registry.init(default.to_json_dict())
    registry.promote(promoted.to_json_dict())
    settings = load_evaluator_settings(checkpoints_dir=tmp_path / "checkpoints", harness_dir=tmp_path / "harness",
                                       limit=1, max_steps=1)
    old = evaluate_job(EvalJob("harness", default.version, "sft-1", "c", "run-7"), settings)
    new = evaluate_job(EvalJob("harness", promoted.version, "sft-1", "c", "run-7"), settings)
    current = evaluate_job(EvalJob("checkpoint", "sft-1", "sft-1", "c", "run-7"), settings)
    assert (old.harness, new.harness, current.harness) == (default.version, promoted.version, promoted.version)
    assert evaluate_job(EvalJob("harness", "0123456789ab", "sft-1", "c", "run-7"), settings) is None
