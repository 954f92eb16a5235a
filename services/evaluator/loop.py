"""The evaluator service's thin loop: checkpoint / harness events → a split evaluation → eval.reported."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from schemas.envelope import Event
from schemas.topics import TOPICS, Topic
from services.evaluator.decide import EvalJob, EvaluatorState, decide, evolve
from services.evaluator.settings import EvaluatorSettings
from streams.admin import create_topics
from streams.consumer import TypedBatchConsumer
from streams.producer import TypedProducer

__all__ = ["evaluate_job", "run_evaluator"]

logger = logging.getLogger(__name__)

CHECKPOINTS = TOPICS["flywheel.checkpoints"]
HARNESS = TOPICS["flywheel.harness"]
EVALS = TOPICS["flywheel.evals"]
SEND_TIMEOUT_S = 30.0


def job_harness(job: EvalJob, settings: EvaluatorSettings) -> Any:
    """The harness spec `job` runs in: a checkpoint in the registry's current harness (what
    rollouts use), a promoted harness version in that version. Raises RegistryError or
    SpecError (one sentence) when the registry cannot give it."""
    from devices.harness.spec import HarnessSpec
    from services.dataflow.registry import HarnessRegistry

    registry = HarnessRegistry(settings.harness_dir)
    if job.subject == "checkpoint":
        return registry.current_spec()
    return HarnessSpec.from_json_dict(registry.get(job.subject_id))


def evaluate_job(job: EvalJob, settings: EvaluatorSettings) -> Event | None:
    """eval.reported for `job`, or None (logged) when its checkpoint or its harness is missing."""
    from devices.harness.spec import SpecError
    from devices.suite.instances import generate_split
    from services.dataflow.registry import RegistryError
    from trainer.evaluate import evaluate_policy
    from trainer.loop import eval_event
    from trainer.models import ModelError
    from trainer.policy import load_policy

    try:
        spec = job_harness(job, settings)
        policy = load_policy(settings.checkpoints_dir / job.checkpoint_id)
    except (ModelError, RegistryError, SpecError) as error:
        logger.warning("cannot evaluate %s %s: %s", job.subject, job.subject_id, error)
        return None
    tasks = [t.model_copy(update={"max_steps": min(t.max_steps, settings.max_steps)})
             for t in generate_split(settings.split, settings.n_per_template, settings.suite_seed)]
    summary = evaluate_policy(policy, tasks[:settings.limit], split=settings.split, progress=False, spec=spec,
                              batch_size=settings.batch_size)
    return eval_event(summary, job.subject_id, run_id=job.correlation_id, causation_id=job.causation_id,
                      subject=job.subject)


def run_evaluator(settings: EvaluatorSettings, bootstrap: str, stop_event: threading.Event, *,
                  checkpoints: Topic = CHECKPOINTS, harness: Topic = HARNESS, evals: Topic = EVALS,
                  state: EvaluatorState | None = None, max_jobs: int | None = None,
                  on_report: Callable[[Event], None] | None = None) -> EvaluatorState:
    """Evaluates each new checkpoint and promoted harness until `stop_event` (or `max_jobs`)."""
    state = state or EvaluatorState()
    create_topics(bootstrap, [checkpoints, harness, evals])
    jobs = 0
    with TypedBatchConsumer(bootstrap, [checkpoints, harness], settings.group_id, client_id="evaluator") as consumer, \
            TypedProducer(bootstrap, client_id="evaluator") as producer:
        while not stop_event.is_set() and (max_jobs is None or jobs < max_jobs):
            for record in consumer.poll_batch(settings.poll_timeout_ms):
                for job in decide(state, record.event):
                    report = evaluate_job(job, settings)
                    if report is not None:
                        producer.send(evals, report).get(timeout=SEND_TIMEOUT_S)
                        if on_report is not None:
                            on_report(report)
                    state = evolve(state, job)
                    jobs += 1
            consumer.commit()
    return state
