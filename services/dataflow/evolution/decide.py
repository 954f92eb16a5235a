"""The evolver's domain logic: a fold over the loop's events and the events it answers with.

`evolve(state, event)` folds tasks (template and goal of each task id), solved episodes
(episode + passing verdict → a success of its template), failure traces and the harness
topic's own events into `EvolverState`. `decide(state, event)` returns what to publish:

- on a failure trace: `harness.proposed` for every failure group that now has enough
  support (each proposal an incremental delta on the current harness, naming its failures);
- on `harness.evaluated` (the evaluator's paired runs): dev — refuse unless the paired
  gain's lower 95% bound is above zero and no family regressed beyond the tolerance; test —
  refuse as overfit when the held-out split loses; else the promotion is pending, and is
  promoted at once or when the veto window has passed (`Tick`);
- on `harness.vetoed`: a pending promotion is rejected;
- a proposal made on an older harness than the current one is rejected as stale (also
  every pending one when another is promoted).

`handle` runs both for one input and folds the outputs in too. Output ids derive from the
proposal id, so deciding a redelivered input again gives the very same events. No I/O here.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from schemas.envelope import Event
from schemas.episodes import EpisodeEnded
from schemas.harness import (
    HarnessEvaluated,
    HarnessPromoted,
    HarnessProposed,
    HarnessRejected,
    HarnessVetoed,
)
from schemas.tasks import TaskProposed
from schemas.verdicts import FailureTraced, VerdictIssued
from services.dataflow.evolution.delta import DeltaError, apply_delta, normalise, spec_version
from services.dataflow.evolution.paired import DEFAULT_TOLERANCE
from services.dataflow.evolution.propose import (
    DEFAULT_MIN_SUPPORT,
    Success,
    Trace,
    propose,
    success_from_episode,
    trace_of,
)
from services.dataflow.ids import derived_id

__all__ = [
    "SOURCE",
    "EvolverConfig",
    "EvolverState",
    "PendingPromotion",
    "Tick",
    "decide",
    "evolve",
    "fold",
    "handle",
    "initial_state",
    "pending_promotions",
    "veto",
]

logger = logging.getLogger(__name__)

SOURCE = "evolver/1"
Status = Literal["proposed", "dev_passed", "pending", "promoted", "rejected"]
#: Episodes waiting for their verdict; older ones are dropped (their verdict is late or lost).
_MAX_WAITING_EPISODES = 2000
#: Task ids remembered for template lookups (a bounded, insertion-ordered index).
_MAX_TASKS = 100_000


@dataclass(frozen=True, slots=True)
class Tick:
    """Time passed (the loop sends one now and then): due promotions go out."""

    now: datetime


@dataclass(frozen=True, slots=True)
class EvolverConfig:
    min_support: int = DEFAULT_MIN_SUPPORT
    tolerance: float = DEFAULT_TOLERANCE
    veto_window_s: float = 0.0  # 0: promote as soon as test holds
    successes_per_template: int = 5
    source: str = SOURCE


@dataclass(frozen=True, slots=True)
class PendingPromotion:
    """A proposal that passed dev and test and waits out the veto window (the gate page)."""

    proposal_id: str
    base: str
    candidate: str
    since: datetime
    due: datetime
    dev_delta: float
    test_delta: float
    rationale: str
    motivated_by: tuple[str, ...]


@dataclass(frozen=True)
class EvolverState:
    current: str
    specs: Mapping[str, Mapping[str, Any]]
    tasks: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    waiting: Mapping[str, EpisodeEnded] = field(default_factory=dict)
    successes: Mapping[str, tuple[Success, ...]] = field(default_factory=dict)
    traces: tuple[Trace, ...] = ()
    proposals: Mapping[str, HarnessProposed] = field(default_factory=dict)
    status: Mapping[str, Status] = field(default_factory=dict)
    evaluations: Mapping[tuple[str, str], HarnessEvaluated] = field(default_factory=dict)
    pending_since: Mapping[str, datetime] = field(default_factory=dict)

    @property
    def spec(self) -> Mapping[str, Any]:
        return self.specs[self.current]


def initial_state(spec: Mapping[str, Any]) -> EvolverState:
    """The state before any event: `spec` (validated as a HarnessSpec) is the current harness."""
    spec = normalise(spec)
    return EvolverState(current=spec["version"], specs={spec["version"]: spec})


def _bounded(mapping: Mapping[str, Any], key: str, value: Any, limit: int) -> dict[str, Any]:
    out = dict(mapping)
    out[key] = value
    while len(out) > limit:
        out.pop(next(iter(out)))
    return out


# ---- evolve ------------------------------------------------------------------------------
def evolve(state: EvolverState, event: Any, config: EvolverConfig | None = None) -> EvolverState:
    """The state after `event` (events of other types leave it as it is)."""
    config = config or EvolverConfig()
    replace = dataclasses.replace
    if isinstance(event, TaskProposed):
        return replace(state, tasks=_bounded(state.tasks, event.task_id,
                                             (event.template, event.goal), _MAX_TASKS))
    if isinstance(event, EpisodeEnded):
        return replace(state, waiting=_bounded(state.waiting, event.episode_id, event,
                                               _MAX_WAITING_EPISODES))
    if isinstance(event, VerdictIssued):
        episode = state.waiting.get(event.episode_id)
        if episode is None:
            return state
        if not event.passed:
            return state  # kept for the failure trace that follows (it reads the steps)
        waiting = {k: v for k, v in state.waiting.items() if k != event.episode_id}
        known = state.tasks.get(event.task_id)
        if known is None:
            return replace(state, waiting=waiting)
        template, goal = known
        solved = success_from_episode(episode, template, goal)
        kept = (*state.successes.get(template, ()), solved)[-config.successes_per_template:]
        return replace(state, waiting=waiting, successes={**state.successes, template: kept})
    if isinstance(event, FailureTraced):
        templates = {k: v[0] for k, v in state.tasks.items()}
        episode = state.waiting.get(event.episode_id)
        waiting = {k: v for k, v in state.waiting.items() if k != event.episode_id}
        return replace(state, waiting=waiting,
                       traces=(*state.traces, trace_of(event, templates, episode)))
    if isinstance(event, HarnessProposed):
        used = set(event.motivated_by)
        return replace(state, proposals={**state.proposals, event.proposal_id: event},
                       status={**state.status, event.proposal_id: "proposed"},
                       traces=tuple(t for t in state.traces if t.event_id not in used))
    if isinstance(event, HarnessEvaluated):
        evaluations = {**state.evaluations, (event.proposal_id, event.split): event}
        status = dict(state.status)
        if event.split == "dev" and status.get(event.proposal_id) == "proposed" and event.passed:
            status[event.proposal_id] = "dev_passed"
        pending = dict(state.pending_since)
        if (event.split == "test" and status.get(event.proposal_id) == "dev_passed"
                and event.passed):
            status[event.proposal_id] = "pending"
            pending[event.proposal_id] = event.occurred_at
        return replace(state, evaluations=evaluations, status=status, pending_since=pending)
    if isinstance(event, HarnessRejected):
        return replace(state, status={**state.status, event.proposal_id: "rejected"},
                       pending_since={k: v for k, v in state.pending_since.items()
                                      if k != event.proposal_id})
    if isinstance(event, HarnessPromoted):
        specs = dict(state.specs)
        proposal = state.proposals.get(event.proposal_id)
        if event.harness not in specs and proposal is not None \
                and proposal.base_harness in specs:
            try:
                candidate = apply_delta(specs[proposal.base_harness], proposal.changes)
            except DeltaError as error:
                logger.warning("promotion of %s ignored: its proposal does not apply (%s)",
                               event.harness, error)
                return state
            specs[candidate["version"]] = candidate
        if event.harness not in specs:
            logger.warning("promotion of unknown harness %s ignored; register its spec first",
                           event.harness)
            return state
        status = dict(state.status)
        if proposal is not None:
            status[event.proposal_id] = "promoted"
        return replace(state, current=event.harness, specs=specs, status=status,
                       pending_since={k: v for k, v in state.pending_since.items()
                                      if k != event.proposal_id})
    return state


# ---- decide ------------------------------------------------------------------------------
def _rejected(state: EvolverState, event: Event, proposal_id: str, reason: str,
              detail: str, config: EvolverConfig) -> HarnessRejected:
    return HarnessRejected(event_id=derived_id("harness.rejected", proposal_id),
                           source=config.source, proposal_id=proposal_id,
                           reason=reason, detail=detail, **event.caused())  # type: ignore[arg-type]


def _promoted(state: EvolverState, proposal_id: str, cause: Event | None,
              config: EvolverConfig, now: datetime | None = None) -> HarnessPromoted:
    proposal = state.proposals[proposal_id]
    dev = state.evaluations[(proposal_id, "dev")]
    test = state.evaluations[(proposal_id, "test")]
    envelope = cause.caused() if cause is not None else {
        "correlation_id": proposal.correlation_id, "causation_id": test.event_id}
    extra = {"occurred_at": now} if now is not None else {}
    candidate = spec_version(apply_delta(state.spec, proposal.changes))
    return HarnessPromoted(event_id=derived_id("harness.promoted", proposal_id),
                           source=config.source, proposal_id=proposal_id,
                           harness=candidate, previous=state.current,
                           motivated_by=list(proposal.motivated_by), dev_delta=dev.delta,
                           test_delta=test.delta, **envelope, **extra)


def _check_dev(dev: HarnessEvaluated, config: EvolverConfig) -> tuple[str, str] | None:
    """(reason, detail) when the dev gate refuses, None when it passes."""
    regressed = sorted(f for f, d in dev.family_deltas.items() if d < -config.tolerance)
    if regressed:
        return ("family_regression",
                f"{', '.join(regressed)} regressed on dev beyond {config.tolerance:.3f}")
    if dev.delta_low <= 0:
        detail = (f"dev gain {dev.delta:+.4f} has lower 95% bound {dev.delta_low:+.4f}, "
                  "not above zero")
        return ("no_gain", detail)
    return None


def _check_test(test: HarnessEvaluated, config: EvolverConfig) -> tuple[str, str] | None:
    regressed = sorted(f for f, d in test.family_deltas.items() if d < -config.tolerance)
    if test.delta < -config.tolerance or regressed:
        where = f"families {', '.join(regressed)}" if regressed else "overall"
        return ("overfit", f"passed dev but lost on test ({where}; overall {test.delta:+.4f})")
    return None


def decide(state: EvolverState, event: Any, config: EvolverConfig | None = None) -> list[Event]:
    """What to publish in answer to `event`, given `state` with `event` already folded in."""
    config = config or EvolverConfig()
    if isinstance(event, FailureTraced):
        made = propose(state.spec, state.traces, state.successes, min_support=config.min_support,
                       exclude=frozenset(state.proposals))
        return [HarnessProposed(event_id=derived_id("harness.proposed", p.proposal_id),
                                source=config.source, proposal_id=p.proposal_id,
                                base_harness=p.base, changes=list(p.changes),
                                motivated_by=list(p.motivated_by), rationale=p.rationale,
                                correlation_id=event.correlation_id, causation_id=event.event_id)
                for p in made]
    if isinstance(event, HarnessEvaluated):
        return _decide_evaluated(state, event, config)
    if isinstance(event, HarnessPromoted):
        # proposals still waiting were measured against the harness just replaced
        return [_rejected(state, event, p, "stale",
                          f"proposed on harness {state.proposals[p].base_harness}, but "
                          f"{state.current} is current now", config)
                for p in sorted(state.pending_since)
                if state.proposals[p].base_harness != state.current]
    if isinstance(event, HarnessVetoed):
        if state.status.get(event.proposal_id) != "pending":
            logger.info("veto of %s ignored: it is %s, not pending", event.proposal_id,
                        state.status.get(event.proposal_id, "unknown"))
            return []
        note = f": {event.note}" if event.note else ""
        return [_rejected(state, event, event.proposal_id, "vetoed",
                          f"vetoed by {event.reviewer}{note}", config)]
    if isinstance(event, Tick):
        window = timedelta(seconds=config.veto_window_s)
        due = sorted((since, p) for p, since in state.pending_since.items()
                     if since + window <= event.now)
        out: list[Event] = []
        for _, proposal_id in due:
            proposal = state.proposals[proposal_id]
            if out or proposal.base_harness != state.current:
                # one promotion per tick: after it, every other pending one is stale
                continue
            out.append(_promoted(state, proposal_id, None, config, event.now))
        return out
    return []


def _decide_evaluated(state: EvolverState, event: HarnessEvaluated,
                      config: EvolverConfig) -> list[Event]:
    proposal = state.proposals.get(event.proposal_id)
    status = state.status.get(event.proposal_id)
    if proposal is None or status in ("rejected", "promoted"):
        return []
    if proposal.base_harness != state.current:
        return [_rejected(state, event, event.proposal_id, "stale",
                          f"proposed on harness {proposal.base_harness}, but {state.current} "
                          "is current now; the evolver proposes again on the new one", config)]
    try:
        candidate = spec_version(apply_delta(state.spec, proposal.changes))
    except DeltaError as error:
        return [_rejected(state, event, event.proposal_id, "invalid", str(error), config)]
    if event.candidate_harness and event.candidate_harness != candidate:
        return [_rejected(state, event, event.proposal_id, "invalid",
                          f"evaluated harness {event.candidate_harness} is not base + proposal "
                          f"({candidate})", config)]
    if event.split == "dev":
        refused = _check_dev(event, config)
        if refused is not None:
            return [_rejected(state, event, event.proposal_id, *refused, config)]
        return []
    if (event.proposal_id, "dev") not in state.evaluations or status not in ("dev_passed",
                                                                             "pending"):
        return []  # a test run without a passed dev run decides nothing
    refused = _check_test(event, config)
    if refused is not None:
        return [_rejected(state, event, event.proposal_id, *refused, config)]
    if config.veto_window_s <= 0:
        return [_promoted(state, event.proposal_id, event, config)]
    return []


def fold(spec: Mapping[str, Any], events: Iterable[Any],
         config: EvolverConfig | None = None) -> EvolverState:
    """The state after `events`, from `spec` (e.g. the gate page replaying the harness topic
    to list pending promotions)."""
    state = initial_state(spec)
    for event in events:
        state = evolve(state, event, config)
    return state


def handle(state: EvolverState, event: Any, config: EvolverConfig | None = None
           ) -> tuple[EvolverState, list[Event]]:
    """Folds `event` in, decides, and folds the decided events in too."""
    config = config or EvolverConfig()
    state = evolve(state, event, config)
    out: list[Event] = []
    queue = decide(state, event, config)
    while queue:
        produced = queue.pop(0)
        state = evolve(state, produced, config)
        out.append(produced)
        if isinstance(produced, HarnessPromoted):
            queue.extend(decide(state, produced, config))
    return state, out


# ---- the gate page's hooks -----------------------------------------------------------------
def pending_promotions(state: EvolverState, config: EvolverConfig | None = None
                       ) -> list[PendingPromotion]:
    """Promotions waiting out the veto window, oldest first."""
    config = config or EvolverConfig()
    out = []
    for proposal_id, since in sorted(state.pending_since.items(), key=lambda kv: kv[1]):
        proposal = state.proposals[proposal_id]
        dev = state.evaluations[(proposal_id, "dev")]
        test = state.evaluations[(proposal_id, "test")]
        out.append(PendingPromotion(
            proposal_id=proposal_id, base=proposal.base_harness,
            candidate=dev.candidate_harness, since=since,
            due=since + timedelta(seconds=config.veto_window_s), dev_delta=dev.delta,
            test_delta=test.delta, rationale=proposal.rationale,
            motivated_by=tuple(proposal.motivated_by)))
    return out


def veto(state: EvolverState, proposal_id: str, reviewer: str, note: str = "") -> HarnessVetoed:
    """The event a person's veto publishes (the gate page calls this); refuses unknown or
    no-longer-pending proposals with one sentence."""
    status = state.status.get(proposal_id)
    if status != "pending":
        raise ValueError(f"proposal {proposal_id} is {status or 'unknown'}, not pending; only "
                         "pending promotions can be vetoed")
    proposal = state.proposals[proposal_id]
    return HarnessVetoed(source="gate/1", proposal_id=proposal_id, reviewer=reviewer, note=note,
                         correlation_id=proposal.correlation_id,
                         causation_id=proposal.event_id)
