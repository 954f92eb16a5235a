"""Gate.decide without a web server: refused rules, and a broker that does not acknowledge."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from schemas.envelope import Event
from services.gate.queue import DecisionRefused
from services.gate.samples import run_sample
from services.gate.service import DecisionNotPublished, Gate
from services.gate.tokens import ReviewerTokens


class Unreachable:
    """A publisher whose broker never acknowledges (what a TypedProducer timeout looks like)."""

    def publish(self, event: Event) -> None:
        raise TimeoutError("no acknowledgement within 10 s")


class Recorder:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def publish(self, event: Event) -> None:
        self.events.append(event)


def gate_with(publisher: object, tmp_path: Path) -> tuple[Gate, str]:
    sample = run_sample("note_phone_of_relation", 0)
    gate = Gate(Ed25519PrivateKey.generate(), ReviewerTokens(tmp_path / "r.json"),
                publisher)  # type: ignore[arg-type]
    for event in sample.events:
        gate.queue.apply(event)
    return gate, sample.request.review_id


def test_an_unacknowledged_decision_is_not_taken_and_can_be_retried(tmp_path: Path) -> None:
    gate, review_id = gate_with(Unreachable(), tmp_path)
    with pytest.raises(DecisionNotPublished, match="not taken"):
        gate.decide(review_id, "alice", "approved")
    assert gate.queue.items[review_id].status == "waiting" and gate.decided == 0
    gate.publisher = Recorder()
    signed = gate.decide(review_id, "alice", "approved")
    assert gate.queue.items[review_id].status == "approved"
    assert gate.publisher.events == [signed]


def test_unknown_reviews_and_refused_decisions(tmp_path: Path) -> None:
    gate, review_id = gate_with(Recorder(), tmp_path)
    with pytest.raises(KeyError):
        gate.decide("rv-none", "alice", "approved")
    with pytest.raises(DecisionRefused):
        gate.decide(review_id, "alice", "rejected", "")
    assert gate.refused == 1 and gate.publisher.events == []


def test_the_gate_cannot_be_built_without_a_signing_key(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="Ed25519 private key"):
        Gate(None, ReviewerTokens(tmp_path / "r.json"), Recorder())  # type: ignore[arg-type]


def test_stats_are_published_only_when_something_was_decided(tmp_path: Path) -> None:
    gate, review_id = gate_with(Recorder(), tmp_path)
    assert gate.publish_stats() is None
    gate.decide(review_id, "alice", "approved")
    report = gate.publish_stats()
    assert report is not None and report.decisions == 1 and report.waiting == 0
    assert report.reviewers[0].reviewer == "alice"
    assert gate.publish_stats() is None  # nothing new
    assert gate.publisher.events[-1] == report


class Slow(Recorder):
    """Acknowledges after a pause, so two decisions on one item overlap."""

    def publish(self, event: Event) -> None:
        import time

        time.sleep(0.05)
        super().publish(event)


def test_two_reviewers_deciding_one_item_at_once_yield_one_decision(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    gate, review_id = gate_with(Slow(), tmp_path)

    def decide(reviewer: str) -> str:
        try:
            gate.decide(review_id, reviewer, "approved")
        except DecisionRefused as error:
            return str(error)
        return "taken"

    with ThreadPoolExecutor(4) as pool:
        outcomes = list(pool.map(decide, ["alice", "bob", "carol", "dana"]))
    assert outcomes.count("taken") == 1
    assert all("already decided" in o for o in outcomes if o != "taken")
    assert len(gate.publisher.events) == 1
