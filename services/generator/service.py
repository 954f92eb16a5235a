"""The generator as a folding service: tasks out, verdicts/feedback/evals in."""

from __future__ import annotations

import logging
from collections import Counter

from schemas.envelope import Event
from schemas.topics import TOPICS, Topic
from services.dataflow.heldout import held_out_mentions
from services.dataflow.ids import derived_id
from services.dataflow.store import Stored
from services.dataflow.tasks import new_harness
from services.generator.construct import COMPOSED_TIER, build_catalogue
from services.generator.decide import (
    GeneratorConfig,
    Tick,
    World,
    decide_counting,
    evolve,
    initial_state,
)
from services.generator.settings import GeneratorSettings

__all__ = ["GeneratorService"]

logger = logging.getLogger(__name__)


class GeneratorService:
    name = "generator"
    apply_outputs = True

    def __init__(self, settings: GeneratorSettings, *, topics: dict[str, Topic] | None = None,
                 ) -> None:
        self.topics = {**TOPICS, **(topics or {})}
        self.inputs = (self.topics["flywheel.verdicts"], self.topics["flywheel.feedback"],
                       self.topics["flywheel.evals"])
        config = GeneratorConfig(generator_id=settings.generator_id,
                                 suite_seed=settings.suite_seed,
                                 queue_depth=settings.queue_depth, max_tasks=settings.max_tasks,
                                 # a composed task is of COMPOSED_TIER: none outside a tier filter
                                 compose_every=settings.compose_every
                                 if not settings.tiers or COMPOSED_TIER in settings.tiers else 0,
                                 rephrase_every=settings.rephrase_every,
                                 oracle_check=settings.oracle_check)
        catalogue = build_catalogue(settings.suite_seed, settings.tiers)
        rephraser = None
        if settings.rephrase_model is not None:
            from services.generator.rephrase_lm import LMRephraser

            rephraser = LMRephraser(settings.rephrase_model)
        self.world = World(catalogue, new_harness("generator-verify"), config, rephraser)
        self.state = initial_state(catalogue)
        #: Candidates verification dropped in this process, by origin.
        self.dropped: Counter[str] = Counter()

    def warm_up(self) -> None:
        """Compiles the held-out patterns before the first candidate is checked."""
        held_out_mentions("")

    def apply(self, stored: Stored) -> None:
        self.state = evolve(self.state, stored.event)

    def _route(self, events: list[Event]) -> list[tuple[Topic, Event]]:
        return [(self.topics["flywheel.mix"] if e.type == "mix.shifted"
                 else self.topics["flywheel.tasks"], e) for e in events]

    def handle(self, stored: Stored) -> list[tuple[Topic, Event]]:
        return self._route(self._decide(stored.event))

    def tick(self) -> list[tuple[Topic, Event]]:
        # The tick id names the state it tops up (total proposed), so a repeated tick after
        # a crash at the same point derives the same causation.
        tick = Tick(derived_id("tick", self.world.config.generator_id, self.state.total))
        return self._route(self._decide(tick))

    def _decide(self, event: Event | Tick) -> list[Event]:
        events, dropped = decide_counting(self.state, event, self.world)
        if dropped:
            self.dropped.update(dropped)
            logger.info("verification dropped %s candidates so far", dict(self.dropped))
        return events
