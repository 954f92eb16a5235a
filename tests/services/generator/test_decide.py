"""The generator's pure domain: queue top-ups, construction and verification, mix shifts."""

from __future__ import annotations

import pytest

from devices.sim import SimPhone
from schemas.training import EvalReported, FamilyScores, TrainingFeedbackIssued
from schemas.verdicts import VerdictIssued
from services.generator.construct import Candidate, build_catalogue, compose, instantiate, verify
from services.generator.decide import (
    GeneratorConfig,
    Tick,
    World,
    decide,
    evolve,
    initial_state,
)
from services.generator.mix import MAX_FACTOR, MIN_FACTOR, clamp_shares, split_key


@pytest.fixture(scope="module")
def world() -> World:
    return World(build_catalogue(0), SimPhone("test-gen"), GeneratorConfig(queue_depth=12))


def _fold(state, events):  # type: ignore[no-untyped-def]
    for event in events:
        state = evolve(state, event)
    return state


def verdict(task_id: str) -> VerdictIssued:
    return VerdictIssued(source="test/0", correlation_id=task_id, episode_id="e-" + task_id,
                         task_id=task_id, checker="final_state", score=1.0, passed=True)


def test_tick_fills_the_queue_with_train_tasks_once(world: World) -> None:
    state = initial_state(world.catalogue)
    out = decide(state, Tick("t0"), world)
    assert len(out) == 12
    assert {e.split for e in out} == {"train"}
    assert len({e.task_id for e in out}) == 12
    state = _fold(state, out)
    assert decide(state, Tick("t1"), world) == []  # full queue: nothing more


def test_a_verdict_frees_a_slot_for_exactly_one_task(world: World) -> None:
    state = _fold(initial_state(world.catalogue), decide(initial_state(world.catalogue),
                                                         Tick("t0"), world))
    first = min(state.open)
    event = verdict(first)
    out = decide(state, event, world)
    assert len(out) == 1 and out[0].task_id not in state.known


def test_decide_is_deterministic_so_a_redelivery_repeats_the_same_ids(world: World) -> None:
    state = initial_state(world.catalogue)
    assert [e.event_id for e in decide(state, Tick("t0"), world)] == \
        [e.event_id for e in decide(state, Tick("t0"), world)]


def test_constructed_tasks_are_published_only_when_verified(world: World) -> None:
    config = GeneratorConfig(queue_depth=60, compose_every=3, rephrase_every=4)
    w = World(world.catalogue, world.phone, config)
    out = decide(initial_state(w.catalogue), Tick("t0"), w)
    origins = {e.origin for e in out}
    assert {"template", "composed", "rephrased"} <= origins
    for event in out:
        if event.origin != "template":
            from services.dataflow.tasks import instance_of
            assert verify(Candidate(instance_of(event), event.tier, event.origin, ()),
                          world.phone) is None


def test_verification_drops_an_unsolvable_task(world: World) -> None:
    names = [t.name for t in world.catalogue.templates]
    reasons = [verify(compose(world.catalogue, a, b, 0, 0), world.phone)
               for a in names[:8] for b in names[-8:] if a != b]
    assert None in reasons  # most compositions are sound …
    assert any(r and "the oracle reaches only" in r for r in reasons)  # … and some are not


def test_verification_drops_a_task_that_is_solved_before_anyone_acts(world: World) -> None:
    from services.dataflow.tasks import oracle_actions

    planted = 0
    for template in world.catalogue.templates:
        candidate = instantiate(world.catalogue, template.name, 0, 0)
        untouched = world.phone.reset(candidate.task) and dict(world.phone.state.settings)
        oracle_actions(candidate.task, world.phone)
        changed = {k: v for k, v in world.phone.state.settings.items() if untouched[k] != v}
        if not changed:
            continue
        solved = candidate.task.model_copy(update={"initial_state": {
            **candidate.task.initial_state, "settings": changed}})
        reason = verify(Candidate(solved, candidate.tier, "template", ()), world.phone)
        if reason is not None and "already scores" in reason:
            planted += 1
    assert planted >= 1


def test_composed_task_needs_both_parts(world: World) -> None:
    names = [t.name for t in world.catalogue.templates]
    candidate = compose(world.catalogue, names[0], names[-1], 0, 0)
    assert candidate.task.template == f"composed:{names[0]}+{names[-1]}"
    assert len(candidate.task.params["parts"]) == 2


def test_feedback_moves_the_mix_toward_weak_templates_within_bounds(world: World) -> None:
    state = initial_state(world.catalogue)
    weak = world.catalogue.templates[3].name
    feedback = TrainingFeedbackIssued(source="trainer/0", correlation_id="run-1", run_id="run-1",
                                      weak_templates=[weak], note="low reward")
    out = decide(state, feedback, world)
    shifts = [e for e in out if e.type == "mix.shifted"]
    assert len(shifts) == 1
    shift = shifts[0]
    assert "weak templates" in shift.reason and "low reward" in shift.reason
    n = len(shift.weights)
    weak_keys = [k for k in shift.weights if split_key(k)[1] == weak]
    assert weak_keys and all(shift.weights[k] > shift.previous[k] for k in weak_keys)
    assert abs(sum(shift.weights.values()) - 1.0) < 1e-9
    assert all(MIN_FACTOR / n - 1e-9 <= v <= MAX_FACTOR / n + 1e-9 for v in shift.weights.values())
    # The next tasks follow the new mix: the weak slice is proposed more than before.
    before = _count(decide(state, Tick("a"), World(world.catalogue, world.phone,
                                                    GeneratorConfig(queue_depth=200))), weak)
    after_state = evolve(state, shift)
    after = _count(decide(after_state, Tick("a"), World(world.catalogue, world.phone,
                                                         GeneratorConfig(queue_depth=200))), weak)
    assert after > before


def _count(events, template):  # type: ignore[no-untyped-def]
    return sum(1 for e in events if e.type == "task.proposed" and template in
               ([e.template, *e.parents]))


def test_same_feedback_twice_still_bounded_and_unchanged_mix_emits_nothing(world: World) -> None:
    state = initial_state(world.catalogue)
    neutral = TrainingFeedbackIssued(source="trainer/0", correlation_id="r", run_id="r")
    assert [e for e in decide(state, neutral, world) if e.type == "mix.shifted"] == []
    weak = world.catalogue.templates[0].name
    for i in range(20):  # repeated boosts saturate at the upper bound
        fb = TrainingFeedbackIssued(source="trainer/0", correlation_id="r", run_id=f"r{i}",
                                    weak_templates=[weak])
        state = _fold(state, [e for e in decide(state, fb, world) if e.type == "mix.shifted"])
    n = len(state.weights)
    top = max(state.weights.values())
    assert top <= MAX_FACTOR / n + 1e-9


def test_eval_report_boosts_slices_scoring_below_the_mean(world: World) -> None:
    state = initial_state(world.catalogue)
    names = [t.name for t in world.catalogue.templates]
    scores = dict.fromkeys(names, 0.9)
    scores[names[1]] = 0.1
    report = EvalReported(source="evaluator/0", correlation_id="c", subject="checkpoint",
                          subject_id="ck-1", split="dev", episodes=10,
                          scores=FamilyScores(tool=1, memory=1, skills=1, subagent=1),
                          overall=0.9, template_scores=scores)
    shift = next(e for e in decide(state, report, world) if e.type == "mix.shifted")
    assert [split_key(k)[1] for k in shift.weak_slices] == [names[1]]


def test_clamp_shares_keeps_every_slice_in_bounds() -> None:
    shares = clamp_shares({"a": 100.0, "b": 1.0, "c": 0.0, "d": 1.0})
    assert abs(sum(shares.values()) - 1.0) < 1e-9
    assert min(shares.values()) >= MIN_FACTOR / 4 - 1e-9
    assert max(shares.values()) <= MAX_FACTOR / 4 + 1e-9
