"""The evolver as a folding service: the loop's events in, harness proposals and decisions out.

Inputs: tasks (template and goal per task id), episodes and verdicts (solved trajectories
to distil from), failure traces, and the harness topic itself (evaluations from an external
evaluator, vetoes from the gate page, rollbacks). With `evaluate` on, each proposal is run
through the gate right here (paired dev runs, then test) and decided on at once. Every
promotion is written to the harness registry, which is what rollouts load. With a
`proposer_model`, a local language model proposes too (after the rules, same gate).

With a veto window (FLYWHEEL_EVOLVER_VETO_WINDOW_S) a proposal that passed dev and test is
pending: the gate page lists it, a veto signed with the gate's key (`harness.vetoed`) rejects
it, and the first tick after the window promotes it. Vetoes the gate did not sign are refused
(logged and counted in `vetoes.refused`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from typing import Any

from devices.harness.spec import HarnessSpec
from devices.suite.policies import make_policy
from schemas.envelope import Event, utc_now
from schemas.harness import HarnessEvaluated, HarnessPromoted, HarnessProposed, HarnessVetoed
from schemas.topics import TOPICS, Topic
from schemas.verdicts import FailureTraced
from services.dataflow.evolution.decide import (
    EvolverConfig,
    EvolverState,
    Tick,
    decide,
    evolve,
    initial_state,
)
from services.dataflow.evolution.settings import EvolverSettings
from services.dataflow.ids import derived_id
from services.dataflow.registry import HarnessRegistry, RegistryError
from services.dataflow.store import Stored
from services.dataflow.vetoes import VetoVerifier
from services.evolver.gate import CachedRunner, Runner, evaluate_proposal
from services.evolver.model_propose import ModelProposer, load_local
from services.evolver.suite_runner import suite_runner

__all__ = ["INPUT_TOPICS", "EvolverService"]

logger = logging.getLogger(__name__)

INPUT_TOPICS = ("flywheel.tasks", "flywheel.episodes", "flywheel.verdicts", "flywheel.failures",
                "flywheel.harness")


class EvolverService:
    name = "evolver"
    #: Own outputs are folded at once: the next failure must see the proposal just made.
    apply_outputs = True

    def __init__(self, registry: HarnessRegistry, settings: EvolverSettings, *,
                 runner: Runner | None = None, topics: Mapping[str, Topic] | None = None,
                 now: Callable[[], Any] | None = None,
                 author: Callable[[str], str] | None = None,
                 vetoes: VetoVerifier | None = None) -> None:
        self.topics = {**TOPICS, **(topics or {})}
        self.inputs = tuple(self.topics[name] for name in INPUT_TOPICS)
        self.registry = registry
        self.config = EvolverConfig(min_support=settings.min_support,
                                    tolerance=settings.tolerance,
                                    veto_window_s=settings.veto_window_s)
        self.settings = settings
        base = (HarnessSpec.load(settings.base_spec) if settings.base_spec
                else HarnessSpec.default()).to_json_dict()
        current = registry.current()
        self.state: EvolverState = initial_state(registry.get(current) if current else base)
        registry.init(self.state.spec)
        if runner is None and settings.evaluate:
            policy = settings.policy
            runner = suite_runner(lambda: make_policy(policy), suite_seed=settings.suite_seed,
                                  n_per_template=settings.n_per_template)
        self.runner = CachedRunner(runner) if runner is not None else None
        #: The clock ticks compare the veto window with (the wall clock unless a test's).
        self._now: Callable[[], Any] = now or utc_now
        if author is None and settings.proposer_model is not None:
            author = load_local(settings.proposer_model)
        self.model_proposer = (ModelProposer(author, min_support=settings.min_support)
                               if author is not None else None)
        #: Checks that the gate signed a veto before it rejects anything (no key: refused).
        self.vetoes = vetoes if vetoes is not None else VetoVerifier(
            path=settings.gate_public_key)

    # ---- FoldingService ----------------------------------------------------------------
    def apply(self, stored: Stored) -> None:
        self.state = evolve(self._known(self.state, stored.event), stored.event, self.config)

    def handle(self, stored: Stored) -> list[tuple[Topic, Event]]:
        if isinstance(stored.event, HarnessVetoed) and \
                self.vetoes.check(stored.event) is not None:
            return []  # not signed by the gate: nobody is known to have vetoed anything
        return self._decide(self.state, stored.event)

    def tick(self) -> list[tuple[Topic, Event]]:
        if not self.state.pending_since:
            return []
        return self._decide(self.state, Tick(self._now()))

    # ---- internals -----------------------------------------------------------------------
    def _decide(self, state: EvolverState, event: Any) -> list[tuple[Topic, Event]]:
        """Decides on `event`, runs the gate on new proposals and decides on its results, all
        on a local copy of the state (the runner folds the outputs in afterwards)."""
        harness_topic = self.topics["flywheel.harness"]
        out: list[Event] = []
        if not isinstance(event, Tick):
            state = evolve(self._known(state, event), event, self.config)
        queue = list(decide(state, event, self.config))
        if isinstance(event, FailureTraced) and self.model_proposer is not None:
            after_rules = state
            for produced in queue:  # the rules' proposals use up their failures first
                after_rules = evolve(after_rules, produced, self.config)
            queue += self._model_proposals(after_rules, event)
        while queue:
            produced = queue.pop(0)
            state = evolve(state, produced, self.config)
            out.append(produced)
            if isinstance(produced, HarnessProposed) and self.runner is not None:
                evaluated = self._gate(state, produced)
                queue = [*evaluated, *queue]
            elif isinstance(produced, HarnessEvaluated | HarnessPromoted):
                queue = [*decide(state, produced, self.config), *queue]
            if isinstance(produced, HarnessPromoted):
                self._register(state, produced)
        return [(harness_topic, e) for e in out]

    def _known(self, state: EvolverState, event: Any) -> EvolverState:
        """A rollback names a version from the registry: its spec joins the state first."""
        if isinstance(event, HarnessPromoted) and event.harness not in state.specs:
            try:
                spec = self.registry.get(event.harness)
            except RegistryError as error:
                logger.warning("promotion of %s ignored: %s", event.harness, error)
                return state
            return dataclasses.replace(state, specs={**state.specs, event.harness: spec})
        return state

    def _model_proposals(self, state: EvolverState, event: FailureTraced
                         ) -> list[HarnessProposed]:
        assert self.model_proposer is not None
        made = self.model_proposer.propose(state.spec, state.traces,
                                           exclude=frozenset(state.proposals))
        return [HarnessProposed(event_id=derived_id("harness.proposed", p.proposal_id),
                                source="evolver/1", proposal_id=p.proposal_id,
                                base_harness=p.base, changes=list(p.changes),
                                motivated_by=list(p.motivated_by), rationale=p.rationale,
                                correlation_id=event.correlation_id, causation_id=event.event_id)
                for p in made]

    def _gate(self, state: EvolverState, proposal: HarnessProposed) -> list[HarnessEvaluated]:
        assert self.runner is not None
        try:
            return evaluate_proposal(state.spec, proposal, self.runner,
                                     suite_seed=self.settings.suite_seed,
                                     tolerance=self.settings.tolerance,
                                     resamples=self.settings.resamples, source="evolver/1")
        except Exception as error:  # noqa: BLE001 - a broken gate run rejects, never crashes
            logger.warning("gate run of %s failed: %s", proposal.proposal_id, error)
            return []

    def _register(self, state: EvolverState, promoted: HarnessPromoted) -> None:
        """Stores the promoted spec and makes it current (idempotent: a redelivery is a no-op)."""
        spec = state.specs.get(promoted.harness)
        if spec is None:
            logger.warning("promotion of %s: spec unknown here, registry left as it is",
                           promoted.harness)
            return
        if self.registry.current() != promoted.harness:
            self.registry.put(spec)
            self.registry.promote(spec, proposal_id=promoted.proposal_id)

