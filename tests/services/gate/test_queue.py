"""The gate's queue: an idempotent fold of the topics, and the rules for a new decision."""

from __future__ import annotations

import pytest

from services.gate.queue import DecisionRefused, ReviewQueue, next_decision
from services.gate.samples import Sample, run_sample


@pytest.fixture(scope="module")
def oracle() -> Sample:
    return run_sample("note_phone_of_relation", 0)


@pytest.fixture(scope="module")
def failing() -> Sample:
    return run_sample("note_phone_of_relation", 1, policy="random", steps=5, tier="hard")


def fold(*samples: Sample) -> ReviewQueue:
    queue = ReviewQueue()
    for sample in samples:
        for event in sample.events:
            queue.apply(event)
    return queue


def test_redelivered_events_change_nothing(oracle: Sample) -> None:
    queue = fold(oracle)
    version = queue.version
    for event in oracle.events:
        assert not queue.apply(event)
    assert queue.version == version and queue.duplicates == len(oracle.events)
    assert len(queue.items) == 1


def test_the_fold_does_not_depend_on_arrival_order(oracle: Sample, failing: Sample) -> None:
    forward = fold(oracle, failing)
    backward = ReviewQueue()
    for event in reversed(oracle.events + failing.events):
        backward.apply(event)
    for queue in (forward, backward):
        item = queue.items[failing.request.review_id]
        assert queue.verdict(item) == "failed"
        assert queue.family(item) == "tool" and queue.tier(item) == "hard"
        assert queue.categories(item) == {"incomplete"}
        assert queue.info(item).goal == failing.task.goal


def test_filters(oracle: Sample, failing: Sample) -> None:
    queue = fold(oracle, failing)
    ids = lambda items: [i.review_id for i in items]
    assert ids(queue.select(verdict="passed")) == [oracle.request.review_id]
    assert ids(queue.select(category="incomplete")) == [failing.request.review_id]
    assert ids(queue.select(tier="hard")) == [failing.request.review_id]
    assert ids(queue.select(family="memory")) == []
    assert len(queue.select(family="tool")) == 2


def test_a_decision_is_folded_once_and_closes_the_item(oracle: Sample) -> None:
    queue = fold(oracle)
    item = queue.items[oracle.request.review_id]
    decision = next_decision(item, "alice", "approved", "")
    assert decision.final and decision.decision_id
    assert queue.apply(decision)
    assert not queue.apply(decision)
    assert item.status == "approved" and queue.select() == []
    with pytest.raises(DecisionRefused, match="already decided"):
        next_decision(item, "bob", "approved", "")


def test_rules_for_a_new_decision() -> None:
    sample = run_sample("note_phone_of_relation", 2, submitted_by="carol")
    item = fold(sample).items[sample.request.review_id]
    with pytest.raises(DecisionRefused, match="wrote this item"):
        next_decision(item, "carol", "approved", "")
    with pytest.raises(DecisionRefused, match="needs a reason"):
        next_decision(item, "alice", "rejected", "  ")
    with pytest.raises(DecisionRefused, match="not part of review"):
        next_decision(item, "alice", "approved", "", ["ep-elsewhere"])
    with pytest.raises(DecisionRefused, match="must be approved"):
        next_decision(item, "alice", "maybe", "x")


@pytest.mark.parametrize(("second", "final_after_two"), [("approved", True), ("rejected", False)])
def test_double_review_needs_two_reviewers_and_a_third_on_disagreement(
        second: str, final_after_two: bool) -> None:
    sample = run_sample("note_phone_of_relation", 3, double_review=True)
    queue = fold(sample)
    item = queue.items[sample.request.review_id]
    first = next_decision(item, "alice", "approved", "")
    assert not first.final
    queue.apply(first)
    assert item.status == "waiting"
    assert queue.select(reviewer="alice") == []  # alice has given her opinion
    with pytest.raises(DecisionRefused, match="already given"):
        next_decision(item, "alice", "approved", "")
    other = next_decision(item, "bob", second, "" if second == "approved" else "no")
    assert other.final is final_after_two
    queue.apply(other)
    if not final_after_two:
        third = next_decision(item, "carol", "rejected", "agree with bob")
        assert third.final
        queue.apply(third)
        assert item.status == "rejected"
    kappa, pairs = queue.kappa()
    assert pairs == 1 and kappa is None  # one pair is too few


def test_unclaimed_episodes_are_evicted_but_claimed_ones_stay() -> None:
    samples = [run_sample("note_phone_of_relation", i) for i in range(4)]
    queue = ReviewQueue(max_unclaimed=1)
    for s in samples[:3]:
        queue.apply(s.episode)  # no review asked about these
    queue.apply(samples[3].request)
    queue.apply(samples[3].episode)
    assert samples[3].episode.episode_id in queue.episodes
    assert len(queue.episodes) == 2


def test_a_decided_items_trajectory_may_be_evicted_a_waiting_ones_not() -> None:
    samples = [run_sample("note_phone_of_relation", i) for i in range(3)]
    queue = ReviewQueue(max_unclaimed=0)
    for s in samples:
        queue.apply(s.request)
        queue.apply(s.episode)
    assert len(queue.episodes) == 3  # all three are waiting for a person
    item = queue.items[samples[0].request.review_id]
    queue.apply(next_decision(item, "alice", "approved", ""))
    assert samples[0].episode.episode_id not in queue.episodes
    assert len(queue.episodes) == 2


def _double_reviewed(queue: ReviewQueue, index: int, first: str, second: str) -> None:
    sample = run_sample("note_phone_of_relation", 10 + index, double_review=True,
                        review_id=f"double-{index}")
    for event in sample.events:
        queue.apply(event)
    item = queue.items[sample.request.review_id]
    for reviewer, decision in (("alice", first), ("bob", second)):
        queue.apply(next_decision(item, reviewer, decision, "" if decision == "approved" else "no"))


def test_a_family_whose_reviewers_disagree_is_admitted_only_through_double_reviews() -> None:
    queue = ReviewQueue()
    single = run_sample("note_phone_of_relation", 30, review_id="single")
    for event in single.events:
        queue.apply(event)
    item = queue.items["single"]
    for i in range(4):  # four disagreements: too few double reviews to say anything yet
        _double_reviewed(queue, i, "approved", "rejected")
    assert queue.admission_block(item) is None
    _double_reviewed(queue, 4, "approved", "rejected")
    (alpha, items), = queue.alpha_by_family().values()
    assert items == 5 and alpha is not None and alpha < 0.67
    why = queue.admission_block(item)
    assert why is not None and "is blocked" in why and "alpha" in why
    with pytest.raises(DecisionRefused, match="is blocked"):
        next_decision(item, "carol", "approved", "", blocked=why)
    assert next_decision(item, "carol", "rejected", "wrong value", blocked=why).final  # a rejection still goes
    for i in range(5, 30):  # the reviewers agree again: the block lifts
        _double_reviewed(queue, i, "approved", "approved")
        _double_reviewed(queue, 100 + i, "rejected", "rejected")
    assert queue.admission_block(item) is None


def test_uncertain_items_come_first_for_people() -> None:
    queue = ReviewQueue()
    for index, review_id, reasons in ((40, "audit-1", ("audit",)), (41, "partial", ("partial_score",)),
                                      (42, "audit-2", ("audit",))):
        for event in run_sample("note_phone_of_relation", index, review_id=review_id, reasons=reasons).events:
            queue.apply(event)
    assert queue.next_waiting("alice").review_id == "partial"  # though it came second
    queue.apply(next_decision(queue.items["partial"], "alice", "approved", ""))
    assert queue.next_waiting("alice").review_id == "audit-1"  # then queue order
    assert queue.next_waiting("alice", after="audit-1").review_id == "audit-2"
