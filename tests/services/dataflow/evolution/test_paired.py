"""The gate's paired comparison: better passes, worse and noise are refused, overfit is caught."""

from __future__ import annotations

import random

import pytest

from services.dataflow.evolution.paired import (
    EpisodeScore,
    PairingError,
    compare,
    gate,
    holdout_check,
)

FAMILIES = {"tool": 6, "memory": 3, "skills": 3, "subagent": 2}  # templates per family


def run(seed: int, *, n: int = 5, shift: dict[str, float] | None = None,
        only: set[str] | None = None, noise: float = 0.0) -> list[EpisodeScore]:
    """A deterministic run over the same instances: base success is fixed by the instance,
    `shift` raises (or lowers) the success chance of a family's templates (of `only`)."""
    out = []
    for family, count in FAMILIES.items():
        for t in range(count):
            template = f"{family}_{t}"
            for i in range(n):
                instance = random.Random(f"{template}:{i}")
                p = instance.random()
                if only is None or template in only:
                    p += (shift or {}).get(family, 0.0)
                p += random.Random(f"{seed}:{template}:{i}").uniform(-noise, noise)
                score = 1.0 if instance.random() < p else 0.0
                out.append(EpisodeScore(f"{template}#{i}", template, family, score))
    return out


def test_identical_runs_are_the_same_and_do_not_pass() -> None:
    base = run(0)
    result = compare(base, base)
    assert result.delta == 0 and result.low == 0 == result.high
    assert result.verdict == "same"
    assert not gate(result).passed and gate(result).reason == "no_gain"


def test_a_real_improvement_passes_the_gate() -> None:
    result = compare(run(0), run(0, shift={"tool": 0.5, "skills": 0.4}))
    assert result.verdict == "better" and result.low > 0
    assert result.candidate_overall > result.base_overall
    decision = gate(result)
    assert decision.passed and decision.reason == "improved"


def test_a_proposal_that_makes_things_worse_is_rejected() -> None:
    result = compare(run(0), run(0, shift={"tool": -0.6}))
    assert result.verdict == "worse" and result.high < 0
    assert not gate(result).passed
    assert gate(result).reason == "family_regression"
    assert "tool" in gate(result).detail


def test_a_family_regression_blocks_an_overall_gain() -> None:
    # tool gains a lot (weight 0.5), sub-agent loses (weight 0.1): the overall rises
    result = compare(run(0), run(0, shift={"tool": 0.6, "subagent": -0.6}))
    assert result.low > 0
    decision = gate(result)
    assert not decision.passed and decision.reason == "family_regression"
    assert result.regressed() == ["subagent"]
    assert gate(result, tolerance=1.0).passed  # and only the tolerance decides that


def test_a_tiny_noisy_gain_does_not_pass() -> None:
    base = run(0, n=3)
    noisy = [EpisodeScore(e.task_id, e.template, e.family, e.score) for e in base]
    flip = next(i for i, e in enumerate(noisy) if e.score == 0 and e.family == "tool")
    noisy[flip] = EpisodeScore(noisy[flip].task_id, noisy[flip].template, "tool", 1.0)
    result = compare(base, noisy)
    assert result.delta > 0
    assert result.low <= 0 and not gate(result).passed


def test_an_overfitting_proposal_passes_dev_and_is_caught_on_test() -> None:
    # the change helps the dev instances it was fitted to and hurts test's tool tasks
    dev = compare(run(0), run(0, shift={"tool": 0.6}))
    assert gate(dev).passed
    test = compare(run(1), run(1, shift={"tool": -0.5}, only={"tool_0", "tool_1", "tool_2"}))
    decision = holdout_check(test)
    assert not decision.passed and decision.reason == "overfit"
    assert "lost on test" in decision.detail and "tool" in decision.detail
    # the same change without the test loss holds
    assert holdout_check(compare(run(1), run(1, shift={"tool": 0.3}))).passed


def test_the_bootstrap_is_seeded_and_reproducible() -> None:
    base, cand = run(0), run(0, shift={"memory": 0.3}, noise=0.2)
    assert compare(base, cand, seed=7) == compare(base, cand, seed=7)
    assert compare(base, cand, seed=7).low != compare(base, cand, seed=8).low


def test_overall_uses_the_suite_weights() -> None:
    base = [EpisodeScore("a", "t", "tool", 0.0), EpisodeScore("b", "m", "memory", 0.0)]
    cand = [EpisodeScore("a", "t", "tool", 1.0), EpisodeScore("b", "m", "memory", 0.0)]
    result = compare(base, cand)
    assert result.delta == pytest.approx(0.5)
    assert result.family_deltas == {"memory": 0.0, "tool": 1.0}


@pytest.mark.parametrize(("base", "cand", "message"), [
    ([EpisodeScore("a", "t", "tool", 1)], [EpisodeScore("b", "t", "tool", 1)], "differ in 2"),
    ([EpisodeScore("a", "t", "tool", 1)] * 2, [EpisodeScore("a", "t", "tool", 1)], "twice"),
    ([EpisodeScore("a", "t", "tool", 1)], [EpisodeScore("a", "u", "tool", 1)], "is t in one"),
    ([], [], "no episodes"),
])
def test_unpaired_runs_are_refused(base: list[EpisodeScore], cand: list[EpisodeScore],
                                   message: str) -> None:
    with pytest.raises(PairingError, match=message):
        compare(base, cand)
