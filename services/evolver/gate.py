"""Runs a proposal through the gate: paired dev runs, then (if dev passes) paired test runs.

`evaluate_proposal` applies the proposal to the base spec, asks a `Runner` for the scores of
both harnesses on the same seeded instances, compares them pairwise and returns the
`harness.evaluated` events (dev, and test when dev passed). The evolver's `decide` turns
those into promotions and rejections. A runner is any `(spec JSON, split) -> scores`; the
suite runner (services.evolver.suite_runner) runs a policy in `Harness(SimPhone, spec)`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from schemas.harness import HarnessEvaluated, HarnessProposed
from schemas.tasks import Split
from services.dataflow.evolution.delta import apply_delta, spec_version
from services.dataflow.evolution.paired import (
    DEFAULT_RESAMPLES,
    DEFAULT_TOLERANCE,
    EpisodeScore,
    GateDecision,
    PairedComparison,
    compare,
    gate,
    holdout_check,
)
from services.dataflow.ids import derived_id

__all__ = ["CachedRunner", "Runner", "evaluate_proposal", "evaluated_event"]

logger = logging.getLogger(__name__)

Runner = Callable[[Mapping[str, Any], Split], Sequence[EpisodeScore]]


class CachedRunner:
    """Remembers scores per (harness version, split): the base harness runs once per round
    however many proposals are compared with it (runs are seeded, so this changes nothing)."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner
        self._cache: dict[tuple[str, str], tuple[EpisodeScore, ...]] = {}
        self.runs = 0

    def __call__(self, spec: Mapping[str, Any], split: Split) -> Sequence[EpisodeScore]:
        key = (spec_version(spec), split)
        if key not in self._cache:
            self._cache[key] = tuple(self._runner(spec, split))
            self.runs += 1
        return self._cache[key]

    def clear(self) -> None:
        """Forget everything (the policy changed: old scores no longer hold)."""
        self._cache.clear()


def evaluated_event(proposal: HarnessProposed, split: Split, result: PairedComparison,
                    decision: GateDecision, candidate: str, *, suite_seed: int,
                    source: str) -> HarnessEvaluated:
    def clip(x: float) -> float:
        return min(1.0, max(-1.0, x))

    return HarnessEvaluated(
        event_id=derived_id("harness.evaluated", proposal.proposal_id, split),
        source=source, proposal_id=proposal.proposal_id, split=split,
        base_overall=min(1.0, max(0.0, result.base_overall)),
        candidate_overall=min(1.0, max(0.0, result.candidate_overall)),
        episodes=result.episodes, verdict=result.verdict, base_harness=proposal.base_harness,
        candidate_harness=candidate, suite_seed=suite_seed, delta=clip(result.delta),
        delta_low=clip(result.low), delta_high=clip(result.high),
        family_deltas=result.family_deltas, passed=decision.passed, reason=decision.detail,
        **proposal.caused())


def evaluate_proposal(base: Mapping[str, Any], proposal: HarnessProposed, runner: Runner, *,
                      suite_seed: int = 0, tolerance: float = DEFAULT_TOLERANCE,
                      resamples: int = DEFAULT_RESAMPLES, source: str = "evaluator/1"
                      ) -> list[HarnessEvaluated]:
    """The dev evaluation, and the test one when dev passed (see the module docstring)."""
    if spec_version(base) != proposal.base_harness:
        raise ValueError(f"proposal {proposal.proposal_id} was made on harness "
                         f"{proposal.base_harness}, not on {spec_version(base)}")
    candidate = apply_delta(base, proposal.changes)
    out = []
    dev = compare(runner(base, "dev"), runner(candidate, "dev"), resamples=resamples)
    decision = gate(dev, tolerance)
    logger.info("proposal %s on dev: %s", proposal.proposal_id, decision.detail)
    out.append(evaluated_event(proposal, "dev", dev, decision, candidate["version"],
                               suite_seed=suite_seed, source=source))
    if decision.passed:
        test = compare(runner(base, "test"), runner(candidate, "test"), resamples=resamples)
        held = holdout_check(test, tolerance)
        logger.info("proposal %s on test: %s", proposal.proposal_id, held.detail)
        out.append(evaluated_event(proposal, "test", test, held, candidate["version"],
                                   suite_seed=suite_seed, source=source))
    return out
