"""The curator's domain: pure `evolve(state, event, policy)` and `decide(state, event, policy)`.

An episode is assessed once its task, its `episode.ended` and its verdict are all folded:
held-out splits, environment faults, failures, exact and near duplicates are dropped (each
counted by reason); the rest become review requests. A failure whose first wrong step the
oracle can recover from (replayed on a deterministic sim) becomes a correction candidate. Rows enter training only through a
decision the admission policy verifies (`services.dataflow.admission`). Assessment happens
inside `evolve`, so re-folding the stored events after a restart reaches the same state.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from schemas.envelope import Event
from schemas.episodes import EpisodeEnded
from schemas.reviews import ReviewDecided, ReviewRequested
from schemas.tasks import MixShifted, TaskProposed
from schemas.training import DatasetSnapshotted
from schemas.verdicts import FailureTraced, VerdictIssued
from services.curator.corrections import Continuation, continuation
from services.curator.dedupe import NEAR_THRESHOLD, exact_signature, jaccard, tokens
from services.curator.examples import trained_steps
from services.dataflow.admission import Admission, AdmissionPolicy
from services.dataflow.heldout import held_out_mentions, task_text
from services.dataflow.ids import derived_id
from services.dataflow.pmap import PMap, PSet
from services.dataflow.store import Stored
from services.dataflow.tasks import new_harness

__all__ = ["CuratorState", "Source", "decide", "evolve", "requests_between", "slice_of"]

logger = logging.getLogger(__name__)

SOURCE = "curator/1.0.0"


@dataclass(frozen=True)
class Source:
    """Where an event was read: its id and topic/partition/offset (lineage columns)."""

    event_id: str
    topic: str
    partition: int | None
    offset: int | None

    @classmethod
    def of(cls, stored: Stored) -> Source:
        return cls(stored.event.event_id, stored.topic, stored.partition, stored.offset)


@dataclass(frozen=True)
class CuratorState:
    """What the curator knows. Its maps grow with the run, so they are persistent (`PMap`): a
    fold writes a few keys in O(1) each and the state before it still reads as it was."""

    tasks: PMap[str, tuple[TaskProposed, Source]] = field(default_factory=PMap)
    episodes: PMap[str, tuple[EpisodeEnded, Source]] = field(default_factory=PMap)
    #: task id -> its episodes' ids (a late task assesses only its own episodes)
    episodes_of_task: PMap[str, tuple[str, ...]] = field(default_factory=PMap)
    verdicts: PMap[str, tuple[VerdictIssued, Source]] = field(default_factory=PMap)
    failures: PMap[str, FailureTraced] = field(default_factory=PMap)
    #: episode id -> where its failure trace was read (a correction row's lineage)
    failure_sources: PMap[str, Source] = field(default_factory=PMap)
    #: episode id -> "candidate" | "review" | "admitted" | "rejected" | "dropped:<reason>"
    status: PMap[str, str] = field(default_factory=PMap)
    exact: PMap[str, str] = field(default_factory=PMap)
    near: PMap[str, tuple[tuple[frozenset[str], str], ...]] = field(default_factory=PMap)
    reviews: PMap[str, tuple[str, ...]] = field(default_factory=PMap)
    #: episode id -> (admission, the decision's source); insertion order is admission order.
    #: Only assessed episodes: a snapshot reads their episode, task and verdict.
    admitted: PMap[str, tuple[Admission, Source]] = field(default_factory=PMap)
    #: Admissions of episodes not assessed yet. After a crash the curator's own review
    #: request and its decision can come back before the redelivered verdict that caused
    #: them (topics are not ordered with each other); they wait here for the assessment.
    pending_admissions: PMap[str, tuple[Admission, Source]] = field(default_factory=PMap)
    #: episodes whose task, episode and verdict (and failure trace) have been judged
    assessed: PSet[str] = field(default_factory=PSet)
    weights: dict[str, float] = field(default_factory=dict)
    snapshots: tuple[str, ...] = ()
    counts: Counter[str] = field(default_factory=Counter)
    #: episode id -> rows of the oracle's continuation, for failures that become corrections
    corrections: PMap[str, int] = field(default_factory=PMap)
    #: Rows the admitted episodes give, kept with `admitted` (a snapshot's trigger reads them on
    #: every event): their demonstration steps, and their corrections' rows.
    demonstration_rows: int = 0
    correction_rows: int = 0

    @property
    def review_queue(self) -> int:
        return sum(1 for s in self.status.values() if s == "review")


def admitted_rows(state: CuratorState, episode_ids: Iterable[str]) -> tuple[int, int]:
    """(demonstration rows, correction rows) that admitting `episode_ids` adds: a correction
    gives its continuation's rows, a demonstration its taught steps."""
    demonstrations = corrections = 0
    for episode_id in episode_ids:
        if episode_id in state.corrections:
            corrections += state.corrections[episode_id]
        else:
            demonstrations += trained_steps(state.episodes[episode_id][0])
    return demonstrations, corrections


def with_row_counts(state: CuratorState) -> CuratorState:
    """`state` with its row counts recounted from `admitted` (a state built whole, not folded)."""
    demonstrations, corrections = admitted_rows(state, state.admitted)
    return replace(state, demonstration_rows=demonstrations, correction_rows=corrections)


def _admit(state: CuratorState, new: list[str]) -> dict[str, int]:
    """The row counts after admitting the (assessed) episodes `new`, as `replace` arguments."""
    demonstrations, corrections = admitted_rows(state, new)
    return {"demonstration_rows": state.demonstration_rows + demonstrations,
            "correction_rows": state.correction_rows + corrections}


def slice_of(task: TaskProposed) -> str:
    return f"{task.family}/{task.template}/{task.tier}"


def _count(state: CuratorState, key: str) -> Counter[str]:
    counts = Counter(state.counts)
    counts[key] += 1
    return counts


def evolve(state: CuratorState, stored: Stored, policy: AdmissionPolicy) -> CuratorState:
    event = stored.event
    if isinstance(event, TaskProposed):
        state = replace(state, tasks=state.tasks.set(event.task_id, (event, Source.of(stored))))
        return _assess_task(state, event.task_id)
    if isinstance(event, EpisodeEnded):
        if event.episode_id in state.episodes:
            return state
        of_task = (*state.episodes_of_task.get(event.task_id, ()), event.episode_id)
        state = replace(state, episodes=state.episodes.set(event.episode_id, (event, Source.of(stored))),
                        episodes_of_task=state.episodes_of_task.set(event.task_id, of_task),
                        counts=_count(state, "episodes"))
        return _assess(state, event.episode_id)
    if isinstance(event, VerdictIssued):
        state = replace(state, verdicts=state.verdicts.set(event.episode_id, (event, Source.of(stored))))
        return _assess(state, event.episode_id)
    if isinstance(event, FailureTraced):
        key = "failure:" + ("environment_fault" if event.environment_fault else event.category)
        state = replace(state, failures=state.failures.set(event.episode_id, event),
                        failure_sources=state.failure_sources.set(event.episode_id, Source.of(stored)),
                        counts=_count(state, key))
        return _assess(state, event.episode_id)
    if isinstance(event, ReviewRequested):
        status = state.status.update((episode_id, "review") for episode_id in event.subject_ids)
        return replace(state, status=status,
                       reviews=state.reviews.set(event.review_id, tuple(event.subject_ids)))
    if isinstance(event, ReviewDecided):
        return _decided(state, event, Source.of(stored), policy)
    if isinstance(event, MixShifted):
        return replace(state, weights=dict(event.weights))
    if isinstance(event, DatasetSnapshotted):
        return replace(state, snapshots=(*state.snapshots, event.snapshot_id))
    return state


def _dropped(status: PMap[str, str], episode_id: str) -> bool:
    return status.get(episode_id, "").startswith("dropped:")


def _decided(state: CuratorState, event: ReviewDecided, source: Source,
             policy: AdmissionPolicy) -> CuratorState:
    asked = state.reviews.get(event.review_id)
    if asked is None:
        return replace(state, counts=_count(state, "decisions_for_unknown_reviews"))
    verdict = policy.verify(event)
    status, admitted, pending = state.status, state.admitted, state.pending_admissions
    if isinstance(verdict, Admission):
        new: list[str] = []
        for episode_id in verdict.episode_ids:
            if episode_id not in asked or episode_id in admitted or episode_id in pending \
                    or _dropped(status, episode_id):
                continue
            if episode_id in state.assessed:
                admitted = admitted.set(episode_id, (verdict, source))
                new.append(episode_id)
            else:  # its verdict has not come back yet (a restart): admitted once assessed
                pending = pending.set(episode_id, (verdict, source))
            status = status.set(episode_id, "admitted")
        approved = set(verdict.episode_ids)
        for episode_id in asked:
            if episode_id not in approved and not _dropped(status, episode_id):
                status = status.set(episode_id, "rejected")
        return replace(state, status=status, admitted=admitted, pending_admissions=pending,
                       **_admit(state, new))
    for episode_id in asked:
        if status.get(episode_id) == "review":
            status = status.set(episode_id, "rejected")
    return replace(state, status=status, counts=_count(state, "rejected_decisions"))


_REPLAY: list[Any] = []


def _replay_harness() -> Any:
    """A sim in the default harness for deterministic correction replays (made once)."""
    if not _REPLAY:
        _REPLAY.append(new_harness("curator-assess"))
    return _REPLAY[0]


def _assess_task(state: CuratorState, task_id: str) -> CuratorState:
    for episode_id in state.episodes_of_task.get(task_id, ()):
        state = _assess(state, episode_id)
    return state


def _judge(state: CuratorState, task: TaskProposed, episode: EpisodeEnded,
           verdict: VerdictIssued) -> str | Continuation | None:
    """What an episode is: "candidate", a `Continuation` (a failure the oracle can correct),
    "dropped:<reason>", or None while its failure trace is still to come."""
    if task.split != "train":
        return "dropped:held_out_split"
    if held_out_mentions(task_text(task.goal, task.params)):
        return "dropped:held_out_value"
    if verdict.environment_fault:
        return "dropped:environment_fault"
    if not verdict.passed:
        failure = state.failures.get(episode.episode_id)
        if failure is None:
            return None  # its failure trace decides: wait for it
        # A first wrong step: can the oracle finish the task from the failing state?
        found = continuation(task, episode, failure, _replay_harness())
        if isinstance(found, Continuation):
            return found
        return "dropped:" + ("failed" if failure.step_index is None else "no_correction")
    if exact_signature(task.template, episode.steps) in state.exact:
        return "dropped:duplicate"
    mine = tokens(episode.steps)
    if any(jaccard(mine, toks) >= NEAR_THRESHOLD for toks, _ in state.near.get(task.template, ())):
        return "dropped:near_duplicate"
    return "candidate"


def _assess(state: CuratorState, episode_id: str) -> CuratorState:
    if episode_id in state.assessed or episode_id not in state.episodes \
            or episode_id not in state.verdicts:
        return state
    episode = state.episodes[episode_id][0]
    if episode.task_id not in state.tasks:
        return state
    task = state.tasks[episode.task_id][0]
    judged = _judge(state, task, episode, state.verdicts[episode_id][0])
    if judged is None:
        return state
    admission = state.pending_admissions.get(episode_id)
    pending = state.pending_admissions.delete(episode_id)
    assessed = state.assessed.add(episode_id)
    if isinstance(judged, str) and judged.startswith("dropped:"):
        status = state.status.set(episode_id, judged)  # even if reviewed: a held-out row never trains
        return replace(state, status=status, pending_admissions=pending, assessed=assessed,
                       counts=_count(state, judged))
    # A candidate. Its review may already be under way (its request came back first).
    status = state.status if episode_id in state.status else state.status.set(episode_id, "candidate")
    admitted = state.admitted if admission is None else state.admitted.set(episode_id, admission)
    new = [] if admission is None else [episode_id]
    if isinstance(judged, Continuation):
        corrected = replace(state, corrections=state.corrections.set(episode_id, len(judged.pairs)))
        return replace(corrected, status=status, pending_admissions=pending, assessed=assessed,
                       admitted=admitted, counts=_count(state, "correction_candidates"),
                       **_admit(corrected, new))
    near = state.near.set(task.template, (*state.near.get(task.template, ()),
                                          (tokens(episode.steps), episode_id)))
    return replace(state, status=status, pending_admissions=pending, assessed=assessed,
                   admitted=admitted, near=near, **_admit(state, new),
                   exact=state.exact.set(exact_signature(task.template, episode.steps), episode_id),
                   counts=_count(state, "candidates"))


def decide(state: CuratorState, stored: Stored, policy: AdmissionPolicy) -> list[Event]:
    """Review requests for episodes that became candidates (and, under an automatic policy,
    its decisions). Snapshots are the service's to write (`services.curator.snapshot`)."""
    return requests_between(state, evolve(state, stored, policy), policy)


def requests_between(state: CuratorState, after: CuratorState,
                     policy: AdmissionPolicy) -> list[Event]:
    """`decide` given the state after the event (`after = evolve(state, …)`), so a caller
    that keeps `after` folds each event once."""
    out: list[Event] = []
    changed = after.status.changed_since(state.status)  # O(this event's changes), not O(run)
    now = {episode_id: after.status.get(episode_id) for episode_id in changed}
    new = [e for e in changed if now[e] == "candidate" and state.status.get(e) != "candidate"]
    for episode_id in new:
        episode = after.episodes[episode_id][0]
        verdict = after.verdicts[episode_id][0]
        task = after.tasks[episode.task_id][0]
        if episode_id in after.corrections:
            failure = after.failures[episode_id]
            summary = (f"correction of {slice_of(task)}: {episode.policy} went wrong at step "
                       f"{failure.step_index} ({failure.category}); the oracle continues "
                       f"— {after.corrections[episode_id]} rows")
        else:
            summary = (f"{slice_of(task)}: {len(episode.steps)} steps by {episode.policy}, "
                       f"verified score {verdict.score:.2f} — {trained_steps(episode)} rows")
        request = ReviewRequested(
            event_id=derived_id("review.requested", episode_id),
            review_id=derived_id("review", episode_id)[:24], subject="episode",
            subject_ids=[episode_id], score=verdict.score, summary=summary,
            source=SOURCE, correlation_id=episode.correlation_id, causation_id=verdict.event_id)
        annotate = getattr(policy, "annotate", None)
        if annotate is not None:  # the gate's policy says why a person must look, if one must
            request = annotate(request, checker=verdict.checker,
                               environment=episode.environment,
                               correction=episode_id in after.corrections,
                               composed=task.origin == "composed",
                               environment_fault=verdict.environment_fault)
        out.append(request)
        if policy.decides_requests:
            decision = policy.decide_request(request)
            if decision is not None:
                out.append(decision)
    return out
