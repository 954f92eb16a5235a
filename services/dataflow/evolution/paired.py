"""The paired comparison behind the gate: same tasks, same seeds, candidate minus base.

Both harnesses run the very same task instances (same suite seed, same instance seeds),
so each instance gives one paired difference and the noise of task difficulty cancels.
The statistic is the suite's own overall (0.5·tool + 0.2·memory + 0.2·skills +
0.1·sub-agent over family means of template means); its 95% interval comes from a
paired bootstrap that resamples instances within each template (so every resample has
the suite's composition). Pure functions, seeded: the same inputs give the same verdict.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = [
    "DEFAULT_RESAMPLES",
    "DEFAULT_TOLERANCE",
    "FAMILY_WEIGHTS",
    "EpisodeScore",
    "GateDecision",
    "PairedComparison",
    "PairingError",
    "compare",
    "gate",
    "holdout_check",
    "summarise",
]

logger = logging.getLogger(__name__)

#: MobilePA-Bench's weights (schemas.training.FamilyScores.overall).
FAMILY_WEIGHTS: dict[str, float] = {"tool": 0.5, "memory": 0.2, "skills": 0.2, "subagent": 0.1}
#: 2,000 resamples put the Monte-Carlo error of a 2.5% quantile near 0.3 percentage points.
DEFAULT_RESAMPLES = 2000
#: A family may lose at most two points of its mean score before a proposal is refused.
DEFAULT_TOLERANCE = 0.02
_ALPHA = 0.05  # two-sided 95% interval; its lower end is the gate's bound


class PairingError(ValueError):
    """The two runs did not see the same tasks, so they cannot be compared pairwise."""


@dataclass(frozen=True, slots=True)
class EpisodeScore:
    """One scored episode: the instance it ran (task_id fixes the seed) and its score."""

    task_id: str
    template: str
    family: str
    score: float


@dataclass(frozen=True, slots=True)
class PairedComparison:
    """Candidate minus base on the same instances, with a 95% paired-bootstrap interval."""

    episodes: int
    base_overall: float
    candidate_overall: float
    delta: float
    low: float
    high: float
    family_deltas: dict[str, float]
    template_deltas: dict[str, float]

    @property
    def verdict(self) -> Literal["better", "same", "worse"]:
        if self.low > 0:
            return "better"
        if self.high < 0:
            return "worse"
        return "same"

    def regressed(self, tolerance: float = DEFAULT_TOLERANCE) -> list[str]:
        """Families whose mean fell by more than `tolerance`."""
        return sorted(f for f, d in self.family_deltas.items() if d < -tolerance)


@dataclass(frozen=True, slots=True)
class GateDecision:
    """Whether a proposal may go on, and the one-sentence reason."""

    passed: bool
    reason: Literal["improved", "no_gain", "family_regression", "overfit", "holds"]
    detail: str


def _pairs(base: Sequence[EpisodeScore], candidate: Sequence[EpisodeScore]
           ) -> dict[str, list[tuple[str, float, float]]]:
    """Paired (task_id, base, candidate) scores grouped by template; refuses unpaired runs."""
    by_id = {e.task_id: e for e in base}
    if len(by_id) != len(base):
        raise PairingError("the base run holds the same task twice")
    cand = {e.task_id: e for e in candidate}
    if len(cand) != len(candidate):
        raise PairingError("the candidate run holds the same task twice")
    if by_id.keys() != cand.keys():
        missing = sorted(by_id.keys() ^ cand.keys())
        raise PairingError(f"the runs differ in {len(missing)} task(s) (e.g. {missing[0]!r}); "
                           "run both harnesses on the same split, seed and instances")
    if not by_id:
        raise PairingError("there are no episodes to compare")
    grouped: dict[str, list[tuple[str, float, float]]] = defaultdict(list)
    for task_id in sorted(by_id):
        b, c = by_id[task_id], cand[task_id]
        if (b.template, b.family) != (c.template, c.family):
            raise PairingError(f"task {task_id!r} is {b.template} in one run and {c.template} "
                               "in the other")
        grouped[b.template].append((b.family, b.score, c.score))
    return grouped


def _overall(template_means: dict[str, float], families: dict[str, str]) -> float:
    per_family: dict[str, list[float]] = defaultdict(list)
    for template, mean in template_means.items():
        per_family[families[template]].append(mean)
    return sum(FAMILY_WEIGHTS.get(f, 0.0) * float(np.mean(v)) for f, v in per_family.items())


def summarise(scores: Sequence[EpisodeScore]) -> tuple[float, dict[str, float]]:
    """The suite's overall and per-family scores of one run (family means of template means;
    a family with no episodes counts 0, as in FamilyScores)."""
    per_template: dict[str, list[float]] = defaultdict(list)
    families: dict[str, str] = {}
    for e in scores:
        per_template[e.template].append(e.score)
        families[e.template] = e.family
    means = {t: float(np.mean(v)) for t, v in per_template.items()}
    per_family: dict[str, list[float]] = defaultdict(list)
    for t, m in means.items():
        per_family[families[t]].append(m)
    family_scores = {f: float(np.mean(per_family[f])) if per_family.get(f) else 0.0
                     for f in FAMILY_WEIGHTS}
    return _overall(means, families), family_scores


def compare(base: Sequence[EpisodeScore], candidate: Sequence[EpisodeScore], *,
            resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> PairedComparison:
    """The paired difference candidate − base in the suite's overall score, its 95% bootstrap
    interval (instances resampled within each template, the same draw for both runs) and the
    per-family and per-template mean differences."""
    grouped = _pairs(base, candidate)
    families = {t: rows[0][0] for t, rows in grouped.items()}
    base_means = {t: float(np.mean([r[1] for r in rows])) for t, rows in grouped.items()}
    cand_means = {t: float(np.mean([r[2] for r in rows])) for t, rows in grouped.items()}
    template_deltas = {t: cand_means[t] - base_means[t] for t in grouped}
    fam_rows: dict[str, list[float]] = defaultdict(list)
    for t, d in template_deltas.items():
        fam_rows[families[t]].append(d)
    family_deltas = {f: float(np.mean(v)) for f, v in sorted(fam_rows.items())}
    base_overall, cand_overall = _overall(base_means, families), _overall(cand_means, families)

    rng = np.random.default_rng(seed)
    # Bootstrap distribution of the overall difference: per template, the mean paired
    # difference of a resample of its instances; then family means and the weights.
    fam_sum: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(resamples))
    fam_count: dict[str, int] = defaultdict(int)
    for template in sorted(grouped):
        diffs = np.array([c - b for _, b, c in grouped[template]])
        picks = rng.integers(0, len(diffs), size=(resamples, len(diffs)))
        fam_sum[families[template]] += diffs[picks].mean(axis=1)
        fam_count[families[template]] += 1
    boot = sum(FAMILY_WEIGHTS.get(f, 0.0) * fam_sum[f] / fam_count[f] for f in fam_sum)
    low, high = np.quantile(boot, [_ALPHA / 2, 1 - _ALPHA / 2])
    episodes = sum(len(rows) for rows in grouped.values())
    return PairedComparison(
        episodes=episodes, base_overall=base_overall, candidate_overall=cand_overall,
        delta=cand_overall - base_overall, low=float(low), high=float(high),
        family_deltas=family_deltas, template_deltas=template_deltas)


def gate(dev: PairedComparison, tolerance: float = DEFAULT_TOLERANCE) -> GateDecision:
    """The dev gate: promote only when the paired improvement's lower 95% bound is above zero
    and no family fell by more than `tolerance`."""
    regressed = dev.regressed(tolerance)
    if regressed:
        worst = min(regressed, key=lambda f: dev.family_deltas[f])
        return GateDecision(False, "family_regression",
                            f"{', '.join(regressed)} regressed on dev beyond {tolerance:.3f} "
                            f"({worst} {dev.family_deltas[worst]:+.3f})")
    if dev.low <= 0:
        return GateDecision(False, "no_gain",
                            f"dev gain {dev.delta:+.4f} has lower 95% bound {dev.low:+.4f}, "
                            "not above zero")
    return GateDecision(True, "improved",
                        f"dev gain {dev.delta:+.4f} (95% [{dev.low:+.4f}, {dev.high:+.4f}])")


def holdout_check(test: PairedComparison, tolerance: float = DEFAULT_TOLERANCE) -> GateDecision:
    """After passing dev, the held-out test split: a change that loses more than `tolerance`
    overall or in any family there overfits dev and is reported and refused."""
    regressed = test.regressed(tolerance)
    if test.delta < -tolerance or regressed:
        where = f"families {', '.join(regressed)}" if regressed else "overall"
        return GateDecision(False, "overfit",
                            f"passed dev but lost on test ({where}; overall {test.delta:+.4f}, "
                            f"95% [{test.low:+.4f}, {test.high:+.4f}])")
    return GateDecision(True, "holds",
                        f"holds on test: {test.delta:+.4f} (95% [{test.low:+.4f}, "
                        f"{test.high:+.4f}])")
