"""The generator as a folding service: tasks out, verdicts/feedback/evals in."""

from __future__ import annotations

import logging

from schemas.envelope import Event
from schemas.topics import TOPICS, Topic
from services.dataflow.ids import derived_id
from services.dataflow.store import Stored
from services.generator.construct import build_catalogue
from services.generator.decide import (
    GeneratorConfig,
    Tick,
    World,
    decide,
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
        from devices.sim import SimPhone

        self.topics = {**TOPICS, **(topics or {})}
        self.inputs = (self.topics["flywheel.verdicts"], self.topics["flywheel.feedback"],
                       self.topics["flywheel.evals"])
        config = GeneratorConfig(generator_id=settings.generator_id,
                                 suite_seed=settings.suite_seed,
                                 queue_depth=settings.queue_depth, max_tasks=settings.max_tasks,
                                 compose_every=settings.compose_every,
                                 rephrase_every=settings.rephrase_every)
        catalogue = build_catalogue(settings.suite_seed)
        self.world = World(catalogue, SimPhone("generator-verify"), config)
        self.state = initial_state(catalogue)
        self._ticks = 0

    def apply(self, stored: Stored) -> None:
        self.state = evolve(self.state, stored.event)

    def _route(self, events: list[Event]) -> list[tuple[Topic, Event]]:
        return [(self.topics["flywheel.mix"] if e.type == "mix.shifted"
                 else self.topics["flywheel.tasks"], e) for e in events]

    def handle(self, stored: Stored) -> list[tuple[Topic, Event]]:
        return self._route(decide(self.state, stored.event, self.world))

    def tick(self) -> list[tuple[Topic, Event]]:
        # The tick id names the state it tops up (total proposed), so a repeated tick after
        # a crash at the same point derives the same causation.
        tick = Tick(derived_id("tick", self.world.config.generator_id, self.state.total))
        return self._route(decide(self.state, tick, self.world))
