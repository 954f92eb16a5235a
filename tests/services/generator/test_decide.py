"""The generator's pure domain: queue top-ups, construction and verification, mix shifts."""

from __future__ import annotations

import pytest

from devices.suite.template import Template
from schemas.actions import Finish
from schemas.training import EvalReported, FamilyScores, TrainingFeedbackIssued
from schemas.verdicts import VerdictIssued
from services.dataflow.tasks import new_harness
from services.generator.construct import Candidate, build_catalogue, compose, verify
from services.generator.decide import (
    GeneratorConfig,
    Tick,
    World,
    competence_factor,
    decide,
    evolve,
    frontier_tier,
    initial_state,
)
from services.generator.mix import MAX_FACTOR, MIN_FACTOR, clamp_shares, split_key


@pytest.fixture(scope="module")
def world() -> World:
    return World(build_catalogue(0), new_harness("test-gen"), GeneratorConfig(queue_depth=12))


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


class AlreadyDone(Template):
    """A planted template whose goal needs no change: solved before anyone acts."""

    name = "planted_already_done"
    family = "tool"
    checker = "final_state"
    goal_template = "Leave everything as it is."

    def initial_state(self, params, rng):  # type: ignore[no-untyped-def]
        return {}

    def expect(self, params, before):  # type: ignore[no-untyped-def]
        return []

    def oracle(self, params, observe):  # type: ignore[no-untyped-def]
        yield Finish()


def test_verification_drops_a_task_that_is_solved_before_anyone_acts(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    from devices.suite import registry

    real = registry.all_templates()
    monkeypatch.setattr(registry, "all_templates", lambda: (*real, AlreadyDone()))
    task = AlreadyDone().generate("train", 0, 0)
    reason = verify(Candidate(task, "easy", "template", ()), world.phone)
    assert reason is not None and "already scores 1.00" in reason


def test_composed_task_needs_both_parts(world: World) -> None:
    names = [t.name for t in world.catalogue.templates]
    candidate = compose(world.catalogue, names[0], names[-1], 0, 0)
    assert candidate.task.template == f"composed:{names[0]}+{names[-1]}"
    assert len(candidate.task.params["parts"]) == 2


def test_a_part_that_answers_goes_last_and_never_beside_another(world: World,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """An answer ends the episode: a composition puts the answering part last (else the oracle
    never reaches the other part), and the generator never pairs two answering templates."""
    from services.generator import construct
    from services.generator.decide import _candidate

    catalogue = world.catalogue
    asking = [t.name for t in catalogue.templates if construct.answers(t)]
    doing = [t.name for t in catalogue.templates if not construct.answers(t)]
    assert asking and doing
    pair = next((a, b) for a in asking for b in doing
                if catalogue.template(a).family != catalogue.template(b).family
                and verify(compose(catalogue, a, b, 0, 0), world.phone) is None)
    assert compose(catalogue, *pair, 0, 0).task.template == f"composed:{pair[1]}+{pair[0]}"
    config = GeneratorConfig(compose_every=1, rephrase_every=0)
    for position in range(12):  # an answering template's partners never answer
        parts = _candidate(catalogue, asking[0], position, 1, config).parents
        assert sum(construct.answers(catalogue.template(p)) for p in parts) == 1, parts
    monkeypatch.setattr(construct, "answers", lambda *_: False)  # the order as asked: it fails
    unordered = compose(catalogue, *pair, 0, 0)
    assert unordered.task.template == f"composed:{pair[0]}+{pair[1]}"
    assert "the oracle reaches only" in (verify(unordered, world.phone) or "")


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


def _report(scores: dict[str, float]) -> EvalReported:
    return EvalReported(source="evaluator/0", correlation_id="c", subject="checkpoint", subject_id="ck-1",
                        split="dev", episodes=10, scores=FamilyScores(tool=1, memory=1, skills=1, subagent=1),
                        overall=0.5, template_scores=scores)


def _by_tier(world: World) -> dict[str, list[str]]:
    tiers: dict[str, list[str]] = {}
    for key in initial_state(world.catalogue).weights:
        _family, template, tier = split_key(key)
        tiers.setdefault(tier, []).append(template)
    return tiers


def test_the_curriculum_boosts_what_the_model_solves_sometimes(world: World) -> None:
    state = initial_state(world.catalogue)
    easy, medium, hard = (_by_tier(world)[t] for t in ("easy", "medium", "hard"))
    scores = dict.fromkeys(easy, 0.0) | dict.fromkeys(medium + hard, 0.0)
    scores[easy[0]], scores[easy[1]], scores[easy[2]] = 0.5, 1.0, 0.0  # learnable, mastered, unsolved
    shift = next(e for e in decide(state, _report(scores), world) if e.type == "mix.shifted")
    assert [split_key(k)[1] for k in shift.weak_slices] == [easy[0]]  # only the learnable one is boosted
    share = {split_key(k)[1]: v for k, v in shift.weights.items()}
    assert share[easy[0]] > share[easy[2]] > share[easy[1]]  # learnable > unsolved at the frontier > mastered
    assert share[easy[2]] > share[hard[0]]  # the easy tier is the frontier: hard tasks wait
    assert "curriculum frontier easy" in shift.reason


def test_the_frontier_moves_on_once_a_tier_is_mastered(world: World) -> None:
    easy, medium, hard = (_by_tier(world)[t] for t in ("easy", "medium", "hard"))
    scores = dict.fromkeys(easy, 1.0) | dict.fromkeys(medium + hard, 0.0)
    assert frontier_tier(scores, {t: tier for tier, names in _by_tier(world).items() for t in names}) == "medium"
    shift = next(e for e in decide(initial_state(world.catalogue), _report(scores), world) if e.type == "mix.shifted")
    share = {split_key(k)[1]: v for k, v in shift.weights.items()}
    assert share[medium[0]] > share[easy[0]] and share[medium[0]] > share[hard[0]]
    assert competence_factor(0.0, "hard", "medium") == competence_factor(1.0, "easy", "medium")  # both at the floor
    assert competence_factor(None, "easy", "medium") == 1.0  # not scored, not beyond the frontier: kept


def test_clamp_shares_keeps_every_slice_in_bounds() -> None:
    shares = clamp_shares({"a": 100.0, "b": 1.0, "c": 0.0, "d": 1.0})
    assert abs(sum(shares.values()) - 1.0) < 1e-9
    assert min(shares.values()) >= MIN_FACTOR / 4 - 1e-9
    assert max(shares.values()) <= MAX_FACTOR / 4 + 1e-9


def test_dropped_candidates_are_counted_not_published(world: World) -> None:
    from services.generator.decide import decide_counting

    composing = World(world.catalogue, world.phone, GeneratorConfig(queue_depth=60,
                                                                     compose_every=1))
    events, dropped = decide_counting(initial_state(world.catalogue), Tick("t0"), composing)
    assert dropped["composed"] >= 1  # some compositions do not verify …
    published = [e for e in events if e.type == "task.proposed"]
    assert len(published) == 60  # … and the queue is still filled with ones that do
    for event in published:
        from services.dataflow.tasks import instance_of
        assert verify(Candidate(instance_of(event), event.tier, event.origin, ()),
                      world.phone) is None


def test_a_tier_filter_draws_only_that_tier_and_composes_nothing() -> None:
    """FLYWHEEL_GENERATOR_TIERS=easy (flywheel run's default learning run): every proposed task is
    an easy template's, and none is composed (a composition is of the hard tier)."""
    from devices.suite.registry import get_template
    from services.generator.service import GeneratorService
    from services.generator.settings import GeneratorSettings

    service = GeneratorService(GeneratorSettings(tiers=("easy",), queue_depth=40, compose_every=2))
    assert service.world.config.compose_every == 0
    out = decide(service.state, Tick("t0"), service.world)
    assert len(out) == 40 and {get_template(e.template).tier for e in out} == {"easy"}
    assert {e.origin for e in out} <= {"template", "rephrased"}
    assert GeneratorService(GeneratorSettings(tiers=("easy", "hard"), compose_every=2)).world.config.compose_every == 2


def test_held_out_test_scores_never_shift_the_mix(world: World) -> None:
    state = initial_state(world.catalogue)
    template = world.catalogue.templates[0].name
    report = {"source": "trainer/0", "correlation_id": "run", "subject": "checkpoint", "subject_id": "ck",
              "episodes": 2, "scores": FamilyScores(tool=0.5, memory=0.5, skills=0.5, subagent=0.5), "overall": 0.5, "template_scores": {template: 0.5}}

    def shifts(split: str) -> list:
        return [e for e in decide(state, EvalReported(split=split, **report), world) if e.type == "mix.shifted"]

    assert shifts("dev")  # a dev report shifts the mix ...
    assert shifts("test") == []  # ... a held-out one never does


def test_a_composed_task_is_scored_by_the_one_checker_on_every_path(world: World) -> None:
    """The generator's oracle check, the verifier's scorer and the trainer's outcome all go
    through devices.suite.scoring.score_final_state, which knows composed tasks: both parts
    done scores 1.0, one part alone does not, the untouched state scores 0."""
    from devices.suite.scoring import composed_name, parts_of, score_final_state
    from services.dataflow.tasks import oracle_actions
    from trainer.outcome import score_episode

    names = [t.name for t in world.catalogue.templates]
    harness = new_harness()
    sound = ((a, b) for a in names[:8] for b in names[-8:]
             if a != b and verify(compose(world.catalogue, a, b, 0, 0), harness) is None)
    first, second = next(sound)  # the generator's own soundness check picks the pair
    task = compose(world.catalogue, first, second, 0, 0).task
    assert [name for name, _ in parts_of(task)] == [first, second]
    harness.reset(task)
    assert score_final_state(task, harness.final_state()).score == 0.0
    actions, score = oracle_actions(task, harness)
    assert score == 1.0 and actions
    assert score_episode(task, harness).success == 1.0  # the trainer's path scores it too
    first_part = task.model_copy(update={"template": composed_name([first]),
                                         "params": {"parts": task.params["parts"][:1]}})
    oracle_actions(first_part, harness)  # the same world, only the first part done
    assert score_final_state(task, harness.final_state()).score < 1.0


class CountingPhone:
    """Stands where the generator's sim would be, and fails the test if anything plays on it."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"the generator used its phone ({name}) without playing the oracle")


def test_without_its_own_oracle_run_the_generator_plays_only_compositions(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the rollout plays the oracle, a template instance or rephrasing is checked without
    a simulator (a start state that already passes is still dropped); a composition, which no
    suite test plays, is still played, and an unsolvable one still dropped."""
    from devices.suite import registry

    names = [t.name for t in world.catalogue.templates]
    config = GeneratorConfig(queue_depth=30, compose_every=0, rephrase_every=4, oracle_check=False)
    out = decide(initial_state(world.catalogue), Tick("t0"), World(world.catalogue, CountingPhone(), config))
    assert len(out) == 30 and {e.origin for e in out} == {"template", "rephrased"}
    real = registry.all_templates()
    monkeypatch.setattr(registry, "all_templates", lambda: (*real, AlreadyDone()))
    done = Candidate(AlreadyDone().generate("train", 0, 0), "easy", "template", ())
    assert "already scores 1.00" in (verify(done, CountingPhone(), play_oracle=False) or "")
    reasons = [verify(compose(world.catalogue, a, b, 0, 0), world.phone, play_oracle=False)
               for a in names[:8] for b in names[-8:] if a != b]
    assert None in reasons and any(r and "the oracle reaches only" in r for r in reasons)
