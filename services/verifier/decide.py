"""The verifier's domain: pure `evolve(state, event)` and `decide(state, event, world)`.

It joins each `episode.ended` with its `task.proposed` (either may arrive first), reads the
final state the rollout stored in the blob store, and scores it with the task's checker —
never the agent's claim. A failed episode also gets a `failure.traced`. Output ids derive
from the episode id, so re-deciding a redelivered episode gives the same events.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field, replace
from typing import Any

from devices.blobs import BlobNotFound, BlobStore
from devices.suite.scoring import part_templates, score_final_state
from schemas.envelope import Event
from schemas.episodes import EpisodeEnded
from schemas.tasks import TaskProposed
from schemas.verdicts import FailureTraced, VerdictIssued
from services.dataflow.ids import derived_id
from services.dataflow.pmap import PMap
from services.dataflow.tasks import instance_of
from services.verifier.trace import trace

__all__ = ["VERIFIER_VERSION", "VerifierState", "World", "decide", "evolve"]

logger = logging.getLogger(__name__)

VERIFIER_VERSION = "verifier/1.0.0"


@dataclass(frozen=True)
class World:
    blobs: BlobStore
    phone: Any  # a Harness around a SimPhone, for the oracle reference of failure traces
    suite_seed: int = 0


@dataclass(frozen=True)
class VerifierState:
    """The tasks seen (persistent: one more per task in O(1)) and the episodes whose task has
    not come yet."""

    tasks: PMap[str, TaskProposed] = field(default_factory=PMap)
    waiting: PMap[str, tuple[EpisodeEnded, ...]] = field(default_factory=PMap)
    verdicts: int = 0
    failures: int = 0


def evolve(state: VerifierState, event: Event) -> VerifierState:
    if isinstance(event, TaskProposed):
        return replace(state, tasks=state.tasks.set(event.task_id, event),
                       waiting=state.waiting.delete(event.task_id))
    if isinstance(event, EpisodeEnded) and event.task_id not in state.tasks:
        queued = state.waiting.get(event.task_id, ())
        if any(e.episode_id == event.episode_id for e in queued):
            return state
        return replace(state, waiting=state.waiting.set(event.task_id, (*queued, event)))
    if isinstance(event, VerdictIssued):
        return replace(state, verdicts=state.verdicts + 1)
    if isinstance(event, FailureTraced):
        return replace(state, failures=state.failures + 1)
    return state


def decide(state: VerifierState, event: Event, world: World) -> list[Event]:
    if isinstance(event, TaskProposed):
        return [out for episode in state.waiting.get(event.task_id, ())
                for out in judge(event, episode, world)]
    if isinstance(event, EpisodeEnded) and event.task_id in state.tasks:
        return judge(state.tasks[event.task_id], event, world)
    return []


def judge(task_event: TaskProposed, episode: EpisodeEnded, world: World) -> list[Event]:
    """The verdict (and failure trace) of one episode of one task."""
    task = instance_of(task_event, world.suite_seed)
    score, problem, progress, violations = 0.0, None, 0.0, []
    if episode.final_state is not None:
        try:
            final = json.loads(world.blobs.get(episode.final_state.sha256))
            result = score_final_state(task, final)
            score, progress, violations = result.score, result.progress, result.violations
        except BlobNotFound:
            problem = "the final state is missing from the blob store"
        except Exception as error:  # noqa: BLE001 - a checker crash is reported, not fatal
            problem = f"the checker failed: {type(error).__name__}: {error}"
    passed = score >= 1.0
    envelope = {"source": VERIFIER_VERSION, "correlation_id": episode.correlation_id,
                "causation_id": episode.event_id}
    details: dict[str, Any] = {"template": task.template, "tier": task_event.tier,
                               "outcome": episode.outcome, "steps": len(episode.steps)}
    if problem:
        details["problem"] = problem
    if violations:
        details["violations"] = violations[:10]
    traced = None
    if not passed:
        traced = trace(task, episode, world.phone, violations=violations)
    # An episode the environment cut short is spoilt even when its state happens to score;
    # a step-level fault the policy recovered from (and passed) is not.
    cut_short = episode.outcome in ("device_failed", "timeout") or episode.final_state is None
    if cut_short and traced is None:
        traced = trace(task, episode, world.phone)
    environment = bool(traced and traced.environment_fault) or problem is not None
    verdict = VerdictIssued(
        event_id=derived_id("verdict.issued", episode.episode_id), episode_id=episode.episode_id,
        task_id=task.task_id, checker=_checker(task.template, part_templates(task)), score=score,
        passed=passed, details=details, progress=progress, environment_fault=environment,
        verifier=VERIFIER_VERSION, **envelope)
    if traced is None:
        return [verdict]
    failure = FailureTraced(
        event_id=derived_id("failure.traced", episode.episode_id), episode_id=episode.episode_id,
        task_id=task.task_id, family=task.family, category=traced.category,
        step_index=traced.step_index, summary=traced.summary,
        evidence=json.loads(json.dumps(traced.evidence, default=str)),
        environment_fault=traced.environment_fault,
        event_ids=[episode.event_id, verdict.event_id], **envelope)
    return [verdict, failure]


def _checker(template: str, parts: list[str]) -> Any:
    from devices.suite.registry import get_template

    return get_template(parts[0]).checker
