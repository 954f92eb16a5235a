"""Reviewer statistics: Cohen's kappa and Krippendorff's alpha over double-reviewed items, and
per-reviewer throughput."""

from __future__ import annotations

import logging
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from schemas.reviews import ReviewerThroughput

__all__ = ["Opinion", "cohens_kappa", "krippendorff_alpha", "throughput"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Opinion:
    """One reviewer's decision on one item, with how long the item was open before it."""

    review_id: str
    reviewer: str
    decision: str
    decided_at: float
    seconds: float | None = None


def cohens_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters over `pairs` of labels; None with fewer than two pairs or
    when chance agreement is certain (both raters used one and the same label throughout)."""
    n = len(pairs)
    if n < 2:
        return None
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    chance = sum(first[label] * second[label] for label in first) / (n * n)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1.0 - chance)


def krippendorff_alpha(units: Iterable[Sequence[str]]) -> float | None:
    """Krippendorff's alpha for nominal labels: `units` are the labels each item got (any number
    of reviewers; items with fewer than two are not pairable and count for nothing). 1 is perfect
    agreement, 0 what chance gives; None with no pairable item or when every label is one and
    the same (no disagreement is expected, so none can be measured)."""
    coincidences: Counter[tuple[str, str]] = Counter()
    for labels in units:
        m = len(labels)
        if m < 2:
            continue
        for i, first in enumerate(labels):
            for j, second in enumerate(labels):
                if i != j:
                    coincidences[(first, second)] += 1.0 / (m - 1)
    totals: Counter[str] = Counter()
    for (first, _), weight in coincidences.items():
        totals[first] += weight
    n = sum(totals.values())
    expected = sum(totals[a] * totals[b] for a in totals for b in totals if a != b)
    if n <= 1 or expected == 0:
        return None
    observed = sum(w for (a, b), w in coincidences.items() if a != b)
    return 1.0 - (n - 1) * observed / expected


def throughput(opinions: Iterable[Opinion]) -> list[ReviewerThroughput]:
    """Per reviewer: decisions, approvals, rejections, decisions per hour of time spent on
    items (open → decided) and the median of that time."""
    by_reviewer: dict[str, list[Opinion]] = defaultdict(list)
    for opinion in opinions:
        by_reviewer[opinion.reviewer].append(opinion)
    out = []
    for reviewer, mine in sorted(by_reviewer.items()):
        spent = [o.seconds for o in mine if o.seconds is not None]
        busy_s = sum(spent)
        out.append(ReviewerThroughput(
            reviewer=reviewer, decisions=len(mine),
            approved=sum(o.decision == "approved" for o in mine),
            rejected=sum(o.decision == "rejected" for o in mine),
            per_hour=len(spent) * 3600.0 / busy_s if busy_s > 0 else 0.0,
            median_s=statistics.median(spent) if spent else None))
    return out
