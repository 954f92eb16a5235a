"""The trainer service's thin loop: snapshot events → training → checkpoint, RL group and feedback events."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from schemas.envelope import Event
from schemas.topics import TOPICS, Topic
from services.trainer.decide import TrainerState, TrainJob, decide, evolve
from services.trainer.settings import TrainerSettings
from streams.admin import create_topics
from streams.consumer import TypedBatchConsumer
from streams.producer import TypedProducer

__all__ = ["CHECKPOINTS", "DATASETS", "FEEDBACK", "run_job", "run_trainer"]

logger = logging.getLogger(__name__)

DATASETS = TOPICS["flywheel.datasets"]
CHECKPOINTS = TOPICS["flywheel.checkpoints"]
FEEDBACK = TOPICS["flywheel.feedback"]
SEND_TIMEOUT_S = 30.0


def _rl_tasks(path: str, seed: int) -> list[Any]:
    """The tasks an RL snapshot names (a `task` column of TaskInstance JSON), else the train split."""
    import pyarrow.parquet as pq

    from devices.protocol import TaskInstance
    from devices.suite.instances import generate_split

    data = Path(path) / "data.parquet"
    if data.is_file():
        table = pq.read_table(data)
        if "task" in table.column_names:
            return [TaskInstance.model_validate_json(t) for t in table.column("task").to_pylist()]
    return generate_split("train", 1, seed)


def run_job(job: TrainJob, state: TrainerState, settings: TrainerSettings) -> tuple[list[Event], str]:
    """Runs one training job; returns the events to publish and the new checkpoint directory."""
    from trainer.loop import checkpoint_event, group_events
    from trainer.rl import run_grpo
    from trainer.sft import CHECKPOINT_FILE, SftConfig, run_sft

    out = settings.checkpoints_dir / job.checkpoint_id
    events: list[Event] = []
    groups: list[Any] = []
    if (out / CHECKPOINT_FILE).is_file():
        logger.info("checkpoint %s exists; publishing it again instead of retraining", job.checkpoint_id)
    elif job.stage == "sft":
        run_sft(state.current_model, job.path, out, SftConfig(
            method=settings.sft_method, epochs=settings.sft_epochs,  # type: ignore[arg-type]
            max_steps=settings.sft_max_steps, learning_rate=settings.sft_learning_rate,
            max_length=settings.sft_max_length),
            run_id=job.correlation_id, checkpoint_id=job.checkpoint_id)
    else:
        result = run_grpo(state.current_model, _rl_tasks(job.path, 0), out, _rl_config(settings),
                          run_id=job.correlation_id, snapshot_id=job.snapshot_id, checkpoint_id=job.checkpoint_id)
        groups = result.groups
    meta = json.loads((out / CHECKPOINT_FILE).read_text())
    saved = checkpoint_event(meta, out, causation_id=job.causation_id)
    events.append(saved)
    events.extend(group_events(groups, run_id=job.correlation_id, causation_id=saved.event_id))
    if groups:
        events.append(_group_feedback(groups, job, saved.event_id))
    return events, str(out)


def _rl_config(settings: TrainerSettings) -> Any:
    from trainer.rl import RlConfig

    return RlConfig(max_steps=settings.rl_steps, num_generations=settings.rl_group,
                    max_completion_length=settings.rl_max_completion_length, max_tool_calls=settings.rl_max_tool_calls)


def _group_feedback(groups: list[Any], job: TrainJob, causation_id: str) -> Event:
    """Training feedback from RL groups: success, tokens and tool calls per family and template."""
    from schemas.training import FeedbackStat, TrainingFeedbackIssued
    from trainer.loop import SOURCE

    stats = []
    for scope, key_of in (("family", lambda g: g.family), ("template", lambda g: g.template)):
        buckets: dict[str, list[Any]] = {}
        for group in groups:
            buckets.setdefault(key_of(group), []).append(group)
        for key, members in sorted(buckets.items()):
            success = [s for g in members for s in g.success]
            tokens = [t for g in members for t in g.output_tokens]
            calls = [c for g in members for c in g.tool_calls]
            stats.append(FeedbackStat(scope=scope, key=key, episodes=len(success),  # type: ignore[arg-type]
                                      success=sum(success) / len(success), mean_output_tokens=sum(tokens) / len(tokens),
                                      mean_tool_calls=sum(calls) / len(calls)))
    template_weights = {s.key: round(1.1 - s.success, 4) for s in stats if s.scope == "template"}
    return TrainingFeedbackIssued(source=SOURCE, correlation_id=job.correlation_id, causation_id=causation_id,
                                  run_id=job.correlation_id, template_weights=template_weights, stats=stats,
                                  weak_templates=sorted(k for k, w in template_weights.items() if w > 0.6),
                                  note=f"GRPO+CARE on snapshot {job.snapshot_id}")


def run_trainer(settings: TrainerSettings, bootstrap: str, stop_event: threading.Event, *,
                datasets: Topic = DATASETS, checkpoints: Topic = CHECKPOINTS, feedback: Topic = FEEDBACK,
                state: TrainerState | None = None, on_job: Callable[[TrainJob], None] | None = None,
                max_jobs: int | None = None) -> TrainerState:
    """Trains on each snapshot event until `stop_event` is set (or `max_jobs` jobs ran)."""
    state = state or TrainerState(current_model=str(settings.base_model))
    create_topics(bootstrap, [datasets, checkpoints, feedback])
    jobs = 0
    with TypedBatchConsumer(bootstrap, [datasets], settings.group_id, client_id="trainer") as consumer, \
            TypedProducer(bootstrap, client_id="trainer") as producer:
        while not stop_event.is_set() and (max_jobs is None or jobs < max_jobs):
            batch = consumer.poll_batch(settings.poll_timeout_ms)
            for record in batch:
                for job in decide(state, record.event):
                    events, checkpoint_dir = run_job(job, state, settings)
                    sent = [producer.send(checkpoints if e.type == "checkpoint.saved" else feedback, e)
                            for e in events]
                    producer.flush()
                    for future in sent:
                        future.get(timeout=SEND_TIMEOUT_S)
                    state = evolve(state, job, checkpoint_dir)
                    jobs += 1
                    if on_job is not None:
                        on_job(job)
            consumer.commit()
    return state
