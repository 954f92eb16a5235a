"""The generator's domain: pure `evolve(state, event)` and `decide(state, event, world)`.

It keeps `queue_depth` tasks open (proposed, no verdict yet), choosing each task's slice
(family/template/tier) as the one furthest below its target share. Every `compose_every`-th
task composes two templates, every `rephrase_every`-th rephrases its goal; each candidate is
verified on a fresh sim before it is proposed, and dropped (counted) when it fails.
Training feedback shifts the target mix toward weak slices and eval reports by competence (a
curriculum: tasks the model solves sometimes first, unsolved ones of the frontier tier next,
mastered ones and harder tiers at the floor), within bounds, as a `mix.shifted` event that says why. Output ids derive from their causes, so re-deciding
a redelivered event yields the same events.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field, replace
from statistics import fmean
from typing import Any

from schemas.envelope import Event
from schemas.tasks import MixShifted, TaskProposed
from schemas.training import EvalReported, TrainingFeedbackIssued
from schemas.verdicts import VerdictIssued
from services.dataflow.ids import derived_id
from services.dataflow.pmap import PSet
from services.dataflow.tasks import task_event
from services.generator.construct import (
    Candidate,
    Catalogue,
    answers,
    compose,
    instantiate,
    rephrase,
    verify,
)
from services.generator.mix import (
    EPSILON,
    MAX_FACTOR,
    MIN_FACTOR,
    WEAK_BOOST,
    clamp_shares,
    pick_slice,
    slice_key,
    split_key,
    uniform_mix,
)

__all__ = [
    "GeneratorConfig",
    "GeneratorState",
    "Tick",
    "World",
    "competence_factor",
    "decide",
    "decide_counting",
    "evolve",
    "frontier_tier",
    "initial_state",
    "shift_for_eval",
    "shift_for_feedback",
]

logger = logging.getLogger(__name__)

SOURCE = "generator/1.0.0"
#: A slice whose candidates keep failing verification is skipped after this many tries.
MAX_TRIES = 8
#: Rephrased tasks use instance positions from here on, apart from plain instances.
REPHRASE_POSITIONS = 50_000
#: The curriculum's tiers, easiest first; a tier whose templates' mean eval score reaches
#: TIER_MASTERED moves the frontier to the next one.
TIER_ORDER = ("easy", "medium", "hard")
TIER_MASTERED = 0.5
#: The factor of a mastered slice or one beyond the frontier (the clamp keeps its floor share).
LEAST_FACTOR = 0.25


@dataclass(frozen=True)
class GeneratorConfig:
    """How the generator proposes (from GeneratorSettings)."""

    generator_id: str = "generator"
    suite_seed: int = 0
    queue_depth: int = 16
    max_tasks: int | None = None
    compose_every: int = 7
    rephrase_every: int = 5
    #: Play the oracle on each task before proposing it (off where the rollout plays the oracle).
    oracle_check: bool = True
    min_factor: float = MIN_FACTOR
    max_factor: float = MAX_FACTOR


@dataclass(frozen=True)
class World:
    """What `decide` needs besides the state: the catalogue and a sim to verify tasks on
    (deterministic, in memory, so decide stays a function of its inputs)."""

    catalogue: Catalogue
    phone: Any
    config: GeneratorConfig = field(default_factory=GeneratorConfig)
    #: A services.generator.rephrase_lm.LMRephraser when a local model is configured.
    rephraser: Any = None


@dataclass(frozen=True)
class Tick:
    """The command 'top up the open tasks' (at start and on a timer)."""

    tick_id: str


@dataclass(frozen=True)
class GeneratorState:
    weights: dict[str, float]
    proposed: dict[str, int] = field(default_factory=dict)
    #: every task id proposed so far (persistent: one more per task in O(1))
    known: PSet[str] = field(default_factory=PSet)
    open: frozenset[str] = frozenset()
    total: int = 0
    shifts: int = 0


def initial_state(catalogue: Catalogue) -> GeneratorState:
    keys = [slice_key(t.family, t.name, catalogue.tiers[t.name]) for t in catalogue.templates]
    return GeneratorState(weights=uniform_mix(keys))


def evolve(state: GeneratorState, event: Event | Tick) -> GeneratorState:
    if isinstance(event, TaskProposed):
        if event.task_id in state.known:
            return state
        key = _slice_of(event)
        proposed = dict(state.proposed)
        proposed[key] = proposed.get(key, 0) + 1
        return replace(state, proposed=proposed, known=state.known.add(event.task_id),
                       open=state.open | {event.task_id}, total=state.total + 1)
    if isinstance(event, VerdictIssued):
        return replace(state, open=state.open - {event.task_id})
    if isinstance(event, MixShifted):
        return replace(state, weights=dict(event.weights), shifts=state.shifts + 1)
    return state


def _slice_of(event: TaskProposed) -> str:
    base = event.parents[0] if event.origin == "composed" and event.parents else event.template
    if event.origin == "rephrased" and event.parents:
        base = event.parents[-1]
    return slice_key(event.family, base, event.tier)


def decide(state: GeneratorState, event: Event | Tick, world: World) -> list[Event]:
    """The events `event` causes: a mix shift for feedback, then tasks topping up the queue
    (a verdict's freed slot included: the top-up sees the state after `event`)."""
    return decide_counting(state, event, world)[0]


def decide_counting(state: GeneratorState, event: Event | Tick, world: World,
                    ) -> tuple[list[Event], Counter[str]]:
    """`decide`, plus the candidates verification dropped on the way, by origin (no event
    records a drop; the service counts them)."""
    dropped: Counter[str] = Counter()
    if not isinstance(event, Tick):
        state = evolve(state, event)
    out: list[Event] = []
    if isinstance(event, TrainingFeedbackIssued):
        out.extend(_shift(state, event, shift_for_feedback(state.weights, event, world.config),
                          world.config.generator_id))
    elif isinstance(event, EvalReported) and event.split != "test":  # held-out scores never steer the data
        out.extend(_shift(state, event, shift_for_eval(state.weights, event, world.config),
                          world.config.generator_id))
    for shifted in out:
        state = evolve(state, shifted)
    cause = event.tick_id if isinstance(event, Tick) else event.event_id
    config = world.config
    while len(state.open) < config.queue_depth and (config.max_tasks is None
                                                     or state.total < config.max_tasks):
        task = _next_task(state, world, cause, dropped)
        if task is None:
            break
        out.append(task)
        state = evolve(state, task)
    return out, dropped


def _next_task(state: GeneratorState, world: World, cause: str,
               dropped: Counter[str]) -> TaskProposed | None:
    config, catalogue = world.config, world.catalogue
    weights = dict(state.weights)
    for _ in range(len(weights)):
        key = pick_slice(weights, state.proposed)
        _family, template, _tier = split_key(key)
        number = state.total + 1  # this would be the n-th task proposed
        position = state.proposed.get(key, 0)
        for _try in range(MAX_TRIES):
            candidate = _candidate(catalogue, template, position, number, config,
                                   world.rephraser)
            position += 1
            if candidate.task.task_id in state.known:
                continue
            reason = verify(candidate, world.phone, play_oracle=config.oracle_check)
            if reason is None:
                return task_event(candidate.task, tier=candidate.tier, origin=candidate.origin,
                                  parents=list(candidate.parents),
                                  priority=round(weights[key] * len(weights), 6),
                                  event_id=derived_id("task.proposed", candidate.task.task_id),
                                  source=SOURCE, correlation_id=candidate.task.task_id,
                                  causation_id=cause)
            dropped[candidate.origin] += 1
            logger.info("dropped constructed task %s: %s", candidate.task.task_id, reason)
        weights.pop(key)  # this slice keeps failing: try the next one
        if not weights:
            break
    return None


def _candidate(catalogue: Catalogue, template: str, position: int, number: int,
               config: GeneratorConfig, rephraser: Any = None) -> Candidate:
    base = instantiate(catalogue, template, position, config.suite_seed)
    if config.compose_every and number % config.compose_every == 0:
        names = [t.name for t in catalogue.templates]
        start = names.index(template)
        # A partner from another family when there is one, chosen by the position; never two
        # parts that both answer (each answer would end the episode).
        answering = answers(catalogue.template(template), config.suite_seed)
        partners = [n for n in names[start + 1:] + names[:start]
                    if catalogue.template(n).family != base.task.family
                    and not (answering and answers(catalogue.template(n), config.suite_seed))] or names
        return compose(catalogue, template, partners[position % len(partners)], position,
                       config.suite_seed)
    if config.rephrase_every and number % config.rephrase_every == 0:
        # Rephrasings draw from their own instance positions: rephrasing an instance that is
        # also proposed as-is would only repeat its action sequence (a duplicate).
        shifted = instantiate(catalogue, template, REPHRASE_POSITIONS + position,
                              config.suite_seed)
        return rephrase(shifted, number // config.rephrase_every, rephraser)
    return base


# ---- mix shifts ------------------------------------------------------------------------------

def shift_for_feedback(weights: dict[str, float], event: TrainingFeedbackIssued,
                       config: GeneratorConfig) -> tuple[dict[str, float], list[str], str]:
    """New shares from the trainer's feedback: family and template weights scale slices,
    weak templates get WEAK_BOOST; returns (shares, weak slices, reason)."""
    raw = {}
    weak = []
    for key, share in weights.items():
        family, template, _tier = split_key(key)
        factor = event.family_weights.get(family, 1.0) * event.template_weights.get(template, 1.0)
        if template in event.weak_templates:
            factor *= WEAK_BOOST
            weak.append(key)
        raw[key] = share * max(0.0, factor)
    reason = (f"training feedback from run {event.run_id}: "
              f"{len(event.weak_templates)} weak templates, "
              f"{len(event.family_weights)} family and {len(event.template_weights)} template "
              f"weights" + (f" ({event.note})" if event.note else ""))
    return clamp_shares(raw, min_factor=config.min_factor, max_factor=config.max_factor), weak, reason


def frontier_tier(template_scores: dict[str, float], tier_of: dict[str, str]) -> str:
    """The curriculum's frontier: the easiest tier whose templates' mean score is below
    TIER_MASTERED (the hardest tier once every one is mastered)."""
    for tier in TIER_ORDER:
        scores = [score for template, score in template_scores.items() if tier_of.get(template) == tier]
        if scores and fmean(scores) < TIER_MASTERED:
            return tier
    return TIER_ORDER[-1]


def competence_factor(score: float | None, tier: str, frontier: str) -> float:
    """How a slice's weight moves with the model's competence on it: tasks it solves sometimes but
    not always (0 < score < 1) carry the learning signal and are boosted; unsolved ones on or below
    the frontier tier stay (where the model learns to copy first); mastered ones, and unsolved ones
    beyond the frontier, fall to the floor the clamp keeps."""
    rank = TIER_ORDER.index(tier) if tier in TIER_ORDER else len(TIER_ORDER)
    ahead = rank > TIER_ORDER.index(frontier)
    if score is None:
        return LEAST_FACTOR if ahead else 1.0
    if 0.0 < score < 1.0:
        return WEAK_BOOST
    if score >= 1.0 or ahead:
        return LEAST_FACTOR
    return 1.0


def shift_for_eval(weights: dict[str, float], event: EvalReported,
                   config: GeneratorConfig) -> tuple[dict[str, float], list[str], str]:
    """New shares from an eval report, by competence (the curriculum): templates the model solves
    sometimes (0 < score < 1) are boosted by WEAK_BOOST, unsolved ones on or below the frontier tier
    (`frontier_tier`) keep their share, mastered ones and those of tiers beyond the frontier drop
    to the floor; every share stays inside the clamp's bounds."""
    scores = event.template_scores
    if not scores:
        return dict(weights), [], "eval report without template scores"
    tier_of = {split_key(key)[1]: split_key(key)[2] for key in weights}
    frontier = frontier_tier(scores, tier_of)
    raw, boosted = {}, []
    for key, share in weights.items():
        _family, template, tier = split_key(key)
        factor = competence_factor(scores.get(template), tier, frontier)
        if factor > 1.0:
            boosted.append(key)
        raw[key] = share * factor
    counts = Counter("learnable" if 0.0 < v < 1.0 else "mastered" if v >= 1.0 else "unsolved"
                     for v in scores.values())
    reason = (f"eval of {event.subject} {event.subject_id} on {event.split}: curriculum frontier {frontier}; "
              f"{counts['learnable']} templates solved sometimes (boosted), {counts['unsolved']} never, "
              f"{counts['mastered']} always")
    return clamp_shares(raw, min_factor=config.min_factor, max_factor=config.max_factor), boosted, reason


def _shift(state: GeneratorState, cause: Event,
           shifted: tuple[dict[str, float], list[str], str], generator_id: str,
           ) -> list[MixShifted]:
    weights, weak, reason = shifted
    if all(abs(weights.get(k, 0.0) - v) <= EPSILON for k, v in state.weights.items()):
        return []
    return [MixShifted(event_id=derived_id("mix.shifted", cause.event_id),
                       generator_id=generator_id,
                       reason=reason, weights=weights, previous=dict(state.weights),
                       weak_slices=sorted(weak), source=SOURCE,
                       correlation_id=cause.correlation_id, causation_id=cause.event_id)]
