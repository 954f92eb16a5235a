"""The generator's domain: pure `evolve(state, event)` and `decide(state, event, world)`.

It keeps `queue_depth` tasks open (proposed, no verdict yet), choosing each task's slice
(family/template/tier) as the one furthest below its target share. Every `compose_every`-th
task composes two templates, every `rephrase_every`-th rephrases its goal; each candidate is
verified on a fresh sim before it is proposed, and dropped (counted) when it fails.
Training feedback and eval reports shift the target mix toward weak slices, within bounds,
as a `mix.shifted` event that says why. Output ids derive from their causes, so re-deciding
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
from services.dataflow.tasks import task_event
from services.generator.construct import (
    Candidate,
    Catalogue,
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
    "decide",
    "evolve",
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
#: An eval template scoring this far below the mean of the report counts as weak.
WEAK_MARGIN = 0.1


@dataclass(frozen=True)
class GeneratorConfig:
    """How the generator proposes (from GeneratorSettings)."""

    generator_id: str = "generator"
    suite_seed: int = 0
    queue_depth: int = 16
    max_tasks: int | None = None
    compose_every: int = 7
    rephrase_every: int = 5
    min_factor: float = MIN_FACTOR
    max_factor: float = MAX_FACTOR


@dataclass(frozen=True)
class World:
    """What `decide` needs besides the state: the catalogue and a sim to verify tasks on
    (deterministic, in memory, so decide stays a function of its inputs)."""

    catalogue: Catalogue
    phone: Any
    config: GeneratorConfig = field(default_factory=GeneratorConfig)


@dataclass(frozen=True)
class Tick:
    """The command 'top up the open tasks' (at start and on a timer)."""

    tick_id: str


@dataclass(frozen=True)
class GeneratorState:
    weights: dict[str, float]
    proposed: dict[str, int] = field(default_factory=dict)
    known: frozenset[str] = frozenset()
    open: frozenset[str] = frozenset()
    total: int = 0
    shifts: int = 0
    #: Candidates dropped by verification in this process (not folded: they are no event).
    dropped: Counter[str] = field(default_factory=Counter)


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
        return replace(state, proposed=proposed, known=state.known | {event.task_id},
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
    if not isinstance(event, Tick):
        state = evolve(state, event)
    out: list[Event] = []
    if isinstance(event, TrainingFeedbackIssued):
        out.extend(_shift(state, event, shift_for_feedback(state.weights, event, world.config),
                          world.config.generator_id))
    elif isinstance(event, EvalReported):
        out.extend(_shift(state, event, shift_for_eval(state.weights, event, world.config),
                          world.config.generator_id))
    for shifted in out:
        state = evolve(state, shifted)
    cause = event.tick_id if isinstance(event, Tick) else event.event_id
    config = world.config
    while len(state.open) < config.queue_depth and (config.max_tasks is None
                                                     or state.total < config.max_tasks):
        task = _next_task(state, world, cause)
        if task is None:
            break
        out.append(task)
        state = evolve(state, task)
    return out


def _next_task(state: GeneratorState, world: World, cause: str) -> TaskProposed | None:
    config, catalogue = world.config, world.catalogue
    weights = dict(state.weights)
    for _ in range(len(weights)):
        key = pick_slice(weights, state.proposed)
        _family, template, _tier = split_key(key)
        number = state.total + 1  # this would be the n-th task proposed
        position = state.proposed.get(key, 0)
        for _try in range(MAX_TRIES):
            candidate = _candidate(catalogue, template, position, number, config)
            position += 1
            if candidate.task.task_id in state.known:
                continue
            reason = verify(candidate, world.phone)
            if reason is None:
                return task_event(candidate.task, tier=candidate.tier, origin=candidate.origin,
                                  parents=list(candidate.parents),
                                  priority=round(weights[key] * len(weights), 6),
                                  event_id=derived_id("task.proposed", candidate.task.task_id),
                                  source=SOURCE, correlation_id=candidate.task.task_id,
                                  causation_id=cause)
            state.dropped[candidate.origin] += 1
            logger.info("dropped constructed task %s: %s", candidate.task.task_id, reason)
        weights.pop(key)  # this slice keeps failing: try the next one
        if not weights:
            break
    return None


def _candidate(catalogue: Catalogue, template: str, position: int, number: int,
               config: GeneratorConfig) -> Candidate:
    base = instantiate(catalogue, template, position, config.suite_seed)
    if config.compose_every and number % config.compose_every == 0:
        names = [t.name for t in catalogue.templates]
        start = names.index(template)
        # A partner from another family when there is one, chosen by the position.
        partners = [n for n in names[start + 1:] + names[:start]
                    if catalogue.template(n).family != base.task.family] or names
        return compose(catalogue, template, partners[position % len(partners)], position,
                       config.suite_seed)
    if config.rephrase_every and number % config.rephrase_every == 0:
        # Rephrasings draw from their own instance positions: rephrasing an instance that is
        # also proposed as-is would only repeat its action sequence (a duplicate).
        shifted = instantiate(catalogue, template, REPHRASE_POSITIONS + position,
                              config.suite_seed)
        return rephrase(shifted, number // config.rephrase_every)
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


def shift_for_eval(weights: dict[str, float], event: EvalReported,
                   config: GeneratorConfig) -> tuple[dict[str, float], list[str], str]:
    """New shares from an eval report: templates scoring below the report's mean by
    WEAK_MARGIN are boosted by up to WEAK_BOOST, in proportion to how far they fall short."""
    scores = event.template_scores
    if not scores:
        return dict(weights), [], "eval report without template scores"
    mean = fmean(scores.values())
    raw, weak = {}, []
    for key, share in weights.items():
        _family, template, _tier = split_key(key)
        score = scores.get(template)
        factor = 1.0
        if score is not None and score < mean - WEAK_MARGIN:
            factor = 1.0 + (WEAK_BOOST - 1.0) * (1.0 - score)
            weak.append(key)
        raw[key] = share * factor
    reason = (f"eval of {event.subject} {event.subject_id} on {event.split}: {len(weak)} slices "
              f"score more than {WEAK_MARGIN:.1f} below the mean {mean:.2f}")
    return clamp_shares(raw, min_factor=config.min_factor, max_factor=config.max_factor), weak, reason


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
