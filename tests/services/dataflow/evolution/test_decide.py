"""The evolver's fold and decisions: proposal → paired dev/test → promotion, rejection, veto."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from schemas.envelope import Event
from schemas.harness import (
    HarnessChange,
    HarnessEvaluated,
    HarnessPromoted,
    HarnessProposed,
    HarnessRejected,
)
from services.dataflow.evolution.decide import (
    EvolverConfig,
    EvolverState,
    Tick,
    handle,
    initial_state,
    pending_promotions,
    veto,
)
from services.dataflow.evolution.delta import spec_version
from services.evolver.gate import CachedRunner, evaluate_proposal
from tests.services.evolver.helpers import SPEC, failure, has_skill, runner, solved, task


def feed(state: EvolverState, events: list[Any], config: EvolverConfig | None = None
         ) -> tuple[EvolverState, list[Event]]:
    out: list[Event] = []
    for event in events:
        state, produced = handle(state, event, config)
        out += produced
    return state, out


def with_failures(config: EvolverConfig | None = None) -> tuple[EvolverState, HarnessProposed]:
    """Two solved texting episodes, then two misroutes: one skill proposal."""
    state = initial_state(SPEC)
    history: list[Any] = [task("text_relative", i, "Text my sister") for i in range(4)]
    for i, (person, cid, body) in enumerate([("Priya", "ct_1", "late"), ("Hana", "ct_2", "hi")]):
        history += list(solved("text_relative", i, person, cid, body))
    state, out = feed(state, history, config)
    assert out == []
    state, out = feed(state, [failure("skill_misroute", "text_relative", 2)], config)
    assert out == []  # one failure is not a pattern
    state, out = feed(state, [failure("skill_misroute", "text_relative", 3)], config)
    (proposal,) = out
    assert isinstance(proposal, HarnessProposed)
    assert proposal.motivated_by == ["fail-skill_misroute-text_relative-2",
                                     "fail-skill_misroute-text_relative-3"]
    assert proposal.base_harness == SPEC["version"]
    assert state.traces == ()  # the motivating failures are used up
    return state, proposal


def skill_helps(spec: Any, split: str, template: str, i: int) -> float | None:
    if template == "text_relative" and has_skill(spec, "do_text_relative"):
        return 1.0
    return None


def test_a_helpful_proposal_is_promoted_and_names_its_failures() -> None:
    state, proposal = with_failures()
    cached = CachedRunner(runner(skill_helps))
    evaluated = evaluate_proposal(state.spec, proposal, cached)
    assert [e.split for e in evaluated] == ["dev", "test"]
    assert evaluated[0].delta_low > 0 and evaluated[0].passed
    state, out = feed(state, evaluated)
    (promoted,) = out
    assert isinstance(promoted, HarnessPromoted)
    assert promoted.previous == SPEC["version"] and promoted.harness == state.current
    assert promoted.harness == evaluated[0].candidate_harness
    assert promoted.motivated_by == proposal.motivated_by
    assert promoted.dev_delta == pytest.approx(evaluated[0].delta) and promoted.dev_delta > 0
    assert has_skill(state.spec, "do_text_relative")
    assert spec_version(state.spec) == state.current
    assert state.status[proposal.proposal_id] == "promoted"
    # replaying an old evaluation changes nothing
    assert feed(state, evaluated)[1] == []


def test_a_proposal_that_makes_things_worse_is_rejected() -> None:
    def skill_hurts(spec: Any, split: str, template: str, i: int) -> float | None:
        return 0.0 if has_skill(spec, "do_text_relative") and template == "text_relative" else None

    state, proposal = with_failures()
    evaluated = evaluate_proposal(state.spec, proposal, runner(skill_hurts))
    assert [e.split for e in evaluated] == ["dev"]  # test is never run for a dev failure
    state, out = feed(state, evaluated)
    (rejected,) = out
    assert isinstance(rejected, HarnessRejected) and rejected.reason == "family_regression"
    assert state.current == SPEC["version"]


def test_a_proposal_that_changes_nothing_is_rejected_for_no_gain() -> None:
    state, proposal = with_failures()
    state, out = feed(state, evaluate_proposal(state.spec, proposal,
                                               runner(lambda *a: None)))
    assert [(type(e).__name__, e.reason) for e in out] == [("HarnessRejected", "no_gain")]


def test_an_overfitting_proposal_is_caught_on_test_and_reported() -> None:
    def overfits(spec: Any, split: str, template: str, i: int) -> float | None:
        if not has_skill(spec, "do_text_relative"):
            return None
        if split == "dev" and template == "text_relative":
            return 1.0
        if split == "test" and template in ("text_relative", "set_alarm"):
            return 0.0  # the distilled procedure misfires on held-out tasks
        return None

    state, proposal = with_failures()
    evaluated = evaluate_proposal(state.spec, proposal, runner(overfits))
    assert [(e.split, e.passed) for e in evaluated] == [("dev", True), ("test", False)]
    state, out = feed(state, evaluated)
    (rejected,) = out
    assert rejected.reason == "overfit" and "lost on test" in rejected.detail
    assert state.current == SPEC["version"]


def test_a_pending_promotion_can_be_vetoed_or_goes_out_after_the_window() -> None:
    config = EvolverConfig(veto_window_s=60)
    state, proposal = with_failures(config)
    evaluated = evaluate_proposal(state.spec, proposal, runner(skill_helps))
    state, out = feed(state, evaluated, config)
    assert out == []
    (pending,) = pending_promotions(state, config)
    assert pending.proposal_id == proposal.proposal_id and pending.dev_delta > 0
    assert pending.due == pending.since + timedelta(seconds=60)

    vetoed_state, out = feed(state, [veto(state, proposal.proposal_id, "ana", "too broad")],
                             config)
    assert [(e.reason, e.detail) for e in out] == [("vetoed", "vetoed by ana: too broad")]
    assert pending_promotions(vetoed_state, config) == []
    with pytest.raises(ValueError, match="not pending"):
        veto(vetoed_state, proposal.proposal_id, "ana")

    early, out = feed(state, [Tick(pending.since + timedelta(seconds=30))], config)
    assert out == [] and early.current == SPEC["version"]
    late, out = feed(state, [Tick(pending.due)], config)
    assert [type(e).__name__ for e in out] == ["HarnessPromoted"]
    assert late.current != SPEC["version"]


def test_pending_proposals_on_a_replaced_harness_become_stale() -> None:
    config = EvolverConfig(veto_window_s=60)
    state, first = with_failures(config)
    state, out = feed(state, [failure("memory_miss", "recall_address", i) for i in range(2)],
                      config)
    (second,) = out

    def both_help(spec: Any, split: str, template: str, i: int) -> float | None:
        if template == "recall_address" and spec["memory"]["context_entries"] >= 5:
            return 1.0
        return skill_helps(spec, split, template, i)

    run = runner(both_help)
    state, _ = feed(state, evaluate_proposal(state.spec, first, run)
                    + evaluate_proposal(state.spec, second, run), config)
    assert len(pending_promotions(state, config)) == 2
    since = max(p.since for p in pending_promotions(state, config))
    state, out = feed(state, [Tick(since + timedelta(seconds=61))], config)
    assert [type(e).__name__ for e in out] == ["HarnessPromoted", "HarnessRejected"]
    assert out[1].reason == "stale"
    assert pending_promotions(state, config) == []


def test_the_cached_runner_runs_the_base_once_per_split() -> None:
    state, proposal = with_failures()
    cached = CachedRunner(runner(skill_helps))
    evaluate_proposal(state.spec, proposal, cached)
    evaluate_proposal(state.spec, proposal, cached)
    assert cached.runs == 4  # base and candidate, dev and test


def test_forged_promotions_and_bad_proposals_change_nothing() -> None:
    state = initial_state(SPEC)
    bad = HarnessProposed(source="someone", correlation_id="r", proposal_id="hp-bad",
                          base_harness=state.current,
                          changes=[HarnessChange(component="skill", op="update", name="nope",
                                                 spec={"description": "x"})])
    state, out = handle(state, bad)
    assert out == []
    forged = HarnessPromoted(source="someone", correlation_id="r", proposal_id="hp-bad",
                             harness="abcdefabcdef", previous=state.current)
    after, out = handle(state, forged)
    assert out == [] and after.current == SPEC["version"]
    # a forged evaluation claiming a pass is judged on its numbers and the proposal itself
    claim = HarnessEvaluated(source="someone", correlation_id="r", proposal_id="hp-bad",
                             base_overall=0.1, candidate_overall=0.9, episodes=10,
                             verdict="better", delta=0.8, delta_low=0.5, delta_high=0.9,
                             passed=True)
    after, out = handle(state, claim)
    assert [(e.type, e.reason) for e in out] == [("harness.rejected", "invalid")]
    assert after.current == SPEC["version"]
