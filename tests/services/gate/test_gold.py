"""Gold items: known-answer trajectories join the queue after every GOLD_EVERY real requests,
look like the others, stay out of the counts, score each reviewer, admit nothing anywhere, and
are rebuilt at the same places when the gate folds the topics again."""

from __future__ import annotations

import pytest

from services.gate.gold import GOLD_EVERY, gold_items
from services.gate.queue import ReviewQueue, next_decision
from services.gate.samples import run_sample


@pytest.fixture(scope="module")
def gold():  # type: ignore[no-untyped-def]
    return gold_items(2)


@pytest.fixture(scope="module")
def real():  # type: ignore[no-untyped-def]
    return [run_sample("note_phone_of_relation", 60 + i, review_id=f"real-{i}") for i in range(2 * GOLD_EVERY)]


def _fold(gold, real) -> ReviewQueue:  # type: ignore[no-untyped-def]
    queue = ReviewQueue(gold=gold)
    for sample in real:
        for event in sample.events:
            queue.apply(event)
    return queue


def test_gold_items_have_known_answers_and_neutral_summaries(gold) -> None:  # type: ignore[no-untyped-def]
    assert [g.answer for g in gold] == ["approved", "rejected"]
    assert gold[0].sample.verdict.score == 1.0 and gold[1].sample.verdict.score < 1.0
    for g in gold:
        assert "oracle" not in g.sample.request.summary and "random" not in g.sample.request.summary
        assert g.review_id.startswith("rv-") and "gold" not in g.review_id


def test_gold_joins_after_every_tenth_request_outside_the_counts(gold, real) -> None:  # type: ignore[no-untyped-def]
    queue = _fold(gold, real)
    order = [item.review_id for item in queue.select(status="all")]
    assert order.index(gold[0].review_id) == GOLD_EVERY  # after the 10th real request
    assert order.index(gold[1].review_id) == 2 * GOLD_EVERY + 1
    counts = queue.counts()
    assert counts["requested"] == counts["waiting"] == len(real)
    assert set(queue.gold) == {g.review_id for g in gold}


def test_gold_scores_each_reviewer_and_survives_a_refold(gold, real) -> None:  # type: ignore[no-untyped-def]
    queue = _fold(gold, real)
    good, bad = (queue.items[g.review_id] for g in gold)
    decisions = [next_decision(good, "alice", "approved", ""),  # right
                 next_decision(bad, "alice", "approved", ""),   # wrong: a failed trajectory approved
                 next_decision(queue.items["real-0"], "alice", "approved", "")]  # not gold: not scored
    for decision in decisions:
        queue.apply(decision)
    assert queue.gold_scores() == {"alice": (1, 2)}
    (alice,) = queue.throughput()
    assert (alice.gold_correct, alice.gold_decided, alice.decisions) == (1, 2, 3)
    assert queue.counts()["approved"] == 1  # the real one only
    again = _fold(gold, real)  # a restarted gate folds the topics again
    for decision in decisions:
        again.apply(decision)
    assert again.gold_scores() == {"alice": (1, 2)}


def test_a_decision_on_a_gold_item_admits_nothing(gold, real) -> None:  # type: ignore[no-untyped-def]
    """The curator never asked about a gold item, so its decision is an unknown review."""
    from services.curator.decide import CuratorState, evolve
    from services.dataflow.admission import AutoAdmission
    from services.dataflow.store import Stored

    queue = _fold(gold, real)
    decision = next_decision(queue.items[gold[0].review_id], "alice", "approved", "")
    state = CuratorState()
    for event in gold[0].sample.events[:-1]:  # even with its task, episode and verdict folded
        state = evolve(state, Stored(event, "t", 0, 0), AutoAdmission())
    state = evolve(state, Stored(decision, "flywheel.reviews", 0, 1), AutoAdmission())
    assert state.admitted == {} and state.counts["decisions_for_unknown_reviews"] == 1
