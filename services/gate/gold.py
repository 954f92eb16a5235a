"""Gold items: review items whose right answer is known, mixed into the queue to score reviewers.

A gold item is a real trajectory played here on the simulator (`services.gate.samples`): the
scripted oracle solving a train task (right answer: approve) or the random policy failing one
(right answer: reject). It looks like any other item (a neutral summary, an id like the others),
is released into the queue after every `GOLD_EVERY` real requests (so its place is not
predictable from the start), and is never published: no admission seam knows its review id, so
a decision on it admits nothing. Each reviewer's decisions on gold items give their gold
accuracy (`ReviewQueue.gold_scores`, shown per reviewer on `/stats` and in
`review.stats_reported`). The set is seeded: a restarted gate, folding the topics again, rebuilds
the same gold items at the same places and finds the decisions made on them.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from schemas.reviews import ReviewRequested
from services.gate.samples import Sample, run_sample

__all__ = ["GOLD_EVERY", "GOLD_TEMPLATES", "GoldItem", "gold_items"]

logger = logging.getLogger(__name__)

#: One gold item joins the queue after every this many real review requests.
GOLD_EVERY = 10
#: Easy train templates gold items are played on (oracle solves them; random fails them).
GOLD_TEMPLATES = ("note_phone_of_relation", "star_relation", "text_relation")


@dataclass(frozen=True)
class GoldItem:
    """A seeded item and its right answer (`approved` or `rejected`)."""

    sample: Sample
    answer: str

    @property
    def review_id(self) -> str:
        return self.sample.request.review_id


def _review_id(seed: int, index: int) -> str:
    return "rv-" + hashlib.sha256(f"gold\x00{seed}\x00{index}".encode()).hexdigest()[:12]


def gold_items(n: int, seed: int = 0) -> list[GoldItem]:
    """`n` gold items, alternately a solved (approve) and a failed (reject) trajectory."""
    items = []
    for index in range(n):
        template = GOLD_TEMPLATES[index % len(GOLD_TEMPLATES)]
        good = index % 2 == 0
        sample = run_sample(template, 500 + seed * 1000 + index, policy="oracle" if good else "random",
                            steps=None if good else 4, run_id=f"gold-{seed}",
                            review_id=_review_id(seed, index))
        if not good and sample.verdict.score >= 1.0:
            logger.warning("gold item %d: the random policy solved %s; it is skipped", index, template)
            continue
        request = ReviewRequested.model_validate({**sample.request.model_dump(),
                                                  "summary": f"{template} #{index}"})
        items.append(GoldItem(Sample(sample.task, sample.episode, sample.verdict, sample.failure, request),
                              "approved" if good else "rejected"))
    return items
