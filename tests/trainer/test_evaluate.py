"""Evaluation summaries: scores per family and tier, and intervals that reflect template spread."""

from __future__ import annotations

from trainer.evaluate import EpisodeRecord, bootstrap_interval, summarise


def _record(template: str, score: float, family: str = "tool", tier: str = "easy") -> EpisodeRecord:
    return EpisodeRecord(task_id=f"{template}#0", template=template, family=family, tier=tier, score=score,
                         success=float(score >= 1.0), steps=2, output_tokens=30, tool_calls=2, invalid=0)


def test_one_episode_per_template_still_gets_a_real_interval() -> None:
    records = [_record(f"t{i}", 1.0 if i == 0 else 0.0) for i in range(10)]
    summary = summarise("p", "dev", records, validity=1.0, prompt_tokens=[100])
    low, high = summary.overall_ci
    assert summary.overall == 0.5 * 0.1  # the tool family's weight times one success in ten
    assert low < summary.overall < high  # not the zero-width interval of resampling episodes alone
    assert low == 0.0
    assert summary.success_ci[0] == 0.0 < summary.success_ci[1]


def test_identical_templates_have_no_spread_and_the_bootstrap_is_seeded() -> None:
    same = [_record(f"t{i}", 1.0) for i in range(6)]
    assert bootstrap_interval(same, lambda s: sum(r.score for r in s) / len(s)) == (1.0, 1.0)
    mixed = [_record(f"t{i}", float(i % 2)) for i in range(6)]
    stat = lambda s: sum(r.score for r in s) / len(s)
    assert bootstrap_interval(mixed, stat, seed=3) == bootstrap_interval(mixed, stat, seed=3)


def test_a_template_drawn_twice_counts_twice() -> None:
    # one good template of four: counted per draw, a resample's mean over templates is k/4 and its
    # 97.5th percentile is 3/4 (three or four good draws: 5.1%); pooling repeats would give 1/2
    records = [_record("good", 1.0)] + [_record(f"bad{i}", 0.0) for i in range(3)]

    def template_mean(sample: list[EpisodeRecord]) -> float:
        scores: dict[str, list[float]] = {}
        for r in sample:
            scores.setdefault(r.template, []).append(r.score)
        return sum(sum(v) / len(v) for v in scores.values()) / len(scores)

    assert bootstrap_interval(records, template_mean, resamples=2000) == (0.0, 0.75)
