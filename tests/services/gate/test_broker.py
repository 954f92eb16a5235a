"""The gate against the real broker: the queue from the topics, restarts, and the security
cases: forged, replayed, self-issued and unsigned decisions reach the curator's verifier
through the reviews topic and are rejected and counted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from schemas.reviews import ReviewDecided, ReviewRequested
from schemas.topics import Topic
from services.dataflow.signing import Signer
from services.dataflow.verify import DecisionVerifier
from services.gate.launch import GateStartError, start_gate
from services.gate.samples import run_sample
from services.gate.service import BrokerPublisher, Gate, GateFeed, GateTopics
from services.gate.settings import GateSettings
from services.gate.tokens import ReviewerTokens
from streams.consumer import TypedBatchConsumer
from streams.dlq import read_dead_letters
from streams.producer import TypedProducer
from tests.services.gate.helpers import fresh_gate_topics, publish, wait_for

pytestmark = pytest.mark.integration


@pytest.fixture
def topics(fresh_topic: Callable[[str], Topic]) -> GateTopics:
    return fresh_gate_topics(fresh_topic)


def make_gate(bootstrap: str, topics: GateTopics, key: Ed25519PrivateKey, tmp_path: Path
              ) -> tuple[Gate, GateFeed, BrokerPublisher]:
    publisher = BrokerPublisher(bootstrap, topics.reviews)
    gate = Gate(key, ReviewerTokens(tmp_path / "reviewers.json"), publisher)
    return gate, GateFeed(gate, bootstrap, topics, poll_ms=100), publisher


def test_the_queue_is_built_from_the_topics_and_rebuilt_after_a_restart(
        bootstrap: str, topics: GateTopics, tmp_path: Path) -> None:
    samples = [run_sample("note_phone_of_relation", 0), run_sample("note_phone_of_relation", 1, policy="random",
                                                        steps=4)]
    events = [e for s in samples for e in s.events]
    publish(bootstrap, topics, events + events[:3])  # a redelivered prefix changes nothing
    key = Ed25519PrivateKey.generate()
    gate, feed, publisher = make_gate(bootstrap, topics, key, tmp_path)
    try:
        wait_for(lambda: len(gate.queue.items) == 2 and len(gate.queue.verdicts) == 2, feed,
                 "both review items")
        first = samples[0].request.review_id
        gate.decide(first, "alice", "approved")
    finally:
        feed.stop()
        publisher.close()
    again, feed2, publisher2 = make_gate(bootstrap, topics, key, tmp_path)
    try:
        wait_for(lambda: again.queue.items.get(first) is not None
                 and again.queue.items[first].status == "approved", feed2,
                 "the decision read back from the reviews topic")
        assert again.queue.counts()["waiting"] == 1
        assert [i.review_id for i in again.queue.select()] == [samples[1].request.review_id]
        assert again.queue.verdict(again.queue.items[first]) == "passed"
    finally:
        feed2.stop()
        publisher2.close()


def _curator_reads(bootstrap: str, reviews: Topic, verifier: DecisionVerifier,
                   expected: int) -> list:
    """What the curator does: consume the reviews topic, expect requests, verify decisions."""
    results = []
    seen = 0
    with TypedBatchConsumer(bootstrap, [reviews], group_id=None) as consumer:
        def drained() -> bool:
            nonlocal seen
            for record in consumer.poll_batch(200):
                seen += 1
                event = record.event
                if isinstance(event, ReviewRequested):
                    verifier.expect(event)
                elif isinstance(event, ReviewDecided):
                    results.append(verifier.verify(event))
            return seen >= expected
        wait_for(drained, what=f"{expected} review events")
    return results


def test_forged_replayed_self_issued_and_unsigned_decisions_are_rejected_by_the_curator(
        bootstrap: str, topics: GateTopics, tmp_path: Path) -> None:
    honest = run_sample("note_phone_of_relation", 0, review_id="rv-honest")
    own = run_sample("note_phone_of_relation", 1, review_id="rv-own", submitted_by="mallory")
    other = run_sample("note_phone_of_relation", 2, review_id="rv-other")
    publish(bootstrap, topics, honest.events + own.events + other.events)
    key = Ed25519PrivateKey.generate()
    gate, feed, publisher = make_gate(bootstrap, topics, key, tmp_path)
    try:
        wait_for(lambda: len(gate.queue.items) == 3, feed, "three review items")
        good = gate.decide("rv-honest", "alice", "approved")
        # the gate itself refuses a self-approval ...
        with pytest.raises(ValueError, match="wrote this item"):
            gate.decide("rv-own", "mallory", "approved")
    finally:
        feed.stop()
        publisher.close()
    envelope = {"source": "attacker/1", "correlation_id": "run"}
    attacker = Signer(Ed25519PrivateKey.generate())
    forged = ReviewDecided.model_validate({**attacker.sign(ReviewDecided(
        review_id="rv-other", decision="approved", reviewer="alice", decision_id="forged-1",
        **envelope)).model_dump(), "key_id": gate.signer.key_id})
    # ... and if a buggy or compromised gate signed one anyway, the curator still refuses it
    self_issued = Signer(key).sign(ReviewDecided(
        review_id="rv-own", decision="approved", reviewer="mallory", decision_id="self-1",
        **envelope))
    unsigned = ReviewDecided(review_id="rv-other", decision="approved", reviewer="alice",
                             **envelope)
    with TypedProducer(bootstrap) as producer:
        for event in (forged, self_issued, unsigned):
            producer.send(topics.reviews, event)
        # a replay: the honest decision's exact bytes sent again
        producer.send(topics.reviews, good)
        producer.flush()
    # the gate, reading the same topic, is not fooled either: the items stay in its queue
    again, feed2, publisher2 = make_gate(bootstrap, topics, key, tmp_path)
    try:
        wait_for(lambda: again.queue.untrusted >= 2 and again.queue.counts()["opinions"] >= 1,
                 feed2, "the gate reading the decisions back")
        assert again.queue.items["rv-other"].status == "waiting"
        assert again.queue.items["rv-own"].status == "waiting"
        assert again.queue.items["rv-honest"].status == "approved"
    finally:
        feed2.stop()
        publisher2.close()
    verifier = DecisionVerifier(key.public_key())
    results = _curator_reads(bootstrap, topics.reviews, verifier, expected=3 + 5)
    assert [r.reason for r in results] == [None, "bad_signature", "self_approval", "unsigned",
                                           "replay"]
    admitted = [r.admitted_ids for r in results if r.admits]
    assert admitted == [tuple(honest.request.subject_ids)]
    assert verifier.accepted == 1 and verifier.rejected_total == 4


def test_the_curator_without_a_key_admits_nothing(bootstrap: str, topics: GateTopics,
                                                  tmp_path: Path) -> None:
    sample = run_sample("note_phone_of_relation", 0)
    publish(bootstrap, topics, sample.events)
    gate, feed, publisher = make_gate(bootstrap, topics, Ed25519PrivateKey.generate(), tmp_path)
    try:
        wait_for(lambda: len(gate.queue.items) == 1, feed, "the review item")
        gate.decide(sample.request.review_id, "alice", "approved")
    finally:
        feed.stop()
        publisher.close()
    closed = DecisionVerifier(None)
    results = _curator_reads(bootstrap, topics.reviews, closed, expected=2)
    assert [r.reason for r in results] == ["no_key"] and closed.rejected["no_key"] == 1


def test_the_gate_refuses_to_start_without_a_key(bootstrap: str, topics: GateTopics,
                                                 tmp_path: Path) -> None:
    settings = GateSettings(port=0)
    with pytest.raises(GateStartError, match="refuses to start without one"):
        start_gate(bootstrap, tmp_path, settings, topics=topics)
    assert not (tmp_path / "gate" / "signing_key.pem").exists()


def test_first_run_creates_the_key_owner_only_and_a_token_kept_for_the_next_run(
        bootstrap: str, topics: GateTopics, tmp_path: Path) -> None:
    settings = GateSettings(port=0)
    handle = start_gate(bootstrap, tmp_path, settings, topics=topics, create_key=True,
                        local_reviewer="local")
    try:
        key_path = tmp_path / "gate" / "signing_key.pem"
        assert handle.key_created and (key_path.stat().st_mode & 0o777) == 0o600
        assert handle.local_token and handle.local_token in handle.banner()
        assert handle.url.startswith("http://127.0.0.1:")
        key_id = handle.gate.signer.key_id
        token = handle.local_token
    finally:
        handle.stop()
    second = start_gate(bootstrap, tmp_path, settings, topics=topics, create_key=True,
                        local_reviewer="local")
    try:
        assert not second.key_created and second.gate.signer.key_id == key_id
        assert second.local_token == token and second.token_reused  # the same token, still valid
        assert second.gate.tokens.reviewer_for(token) == "local"
        assert "the same as last run" in second.banner()
    finally:
        second.stop()
    third = start_gate(bootstrap, tmp_path, settings, topics=topics, create_key=True,
                       local_reviewer="local", rotate_token=True)
    try:
        assert third.local_token != token and not third.token_reused  # rotated: the old one is void
        assert third.gate.tokens.reviewer_for(token) is None
        assert token not in (tmp_path / "gate" / "reviewers.json").read_text()  # stored hashed only
    finally:
        third.stop()


def test_bad_bytes_on_a_topic_are_dead_lettered_and_the_feed_goes_on(
        bootstrap: str, topics: GateTopics, tmp_path: Path) -> None:
    sample = run_sample("note_phone_of_relation", 0)
    with TypedProducer(bootstrap) as producer:
        producer.send_raw(topics.episodes.name, b"{not json", key=b"x")
        producer.flush()
    publish(bootstrap, topics, sample.events)
    gate, feed, publisher = make_gate(bootstrap, topics, Ed25519PrivateKey.generate(), tmp_path)
    try:
        wait_for(lambda: len(gate.queue.items) == 1 and len(gate.queue.episodes) == 1, feed,
                 "the good events after the bad one")
    finally:
        feed.stop()  # flushes the dead letters
        publisher.close()
    letters = read_dead_letters(bootstrap, topics.episodes.name)
    assert [letter.value for letter in letters] == [b"{not json"]
    assert letters[0].source_topic == topics.episodes.name


def test_kappa_and_throughput_are_events_on_the_reviews_topic(
        bootstrap: str, topics: GateTopics, tmp_path: Path) -> None:
    samples = [run_sample("note_phone_of_relation", i, double_review=True, review_id=f"rv-d{i}")
               for i in range(4)]
    publish(bootstrap, topics, [e for s in samples for e in s.events])
    gate, feed, publisher = make_gate(bootstrap, topics, Ed25519PrivateKey.generate(), tmp_path)
    try:
        wait_for(lambda: len(gate.queue.items) == 4, feed, "four double-review items")
        for i, (first, second) in enumerate([("approved", "approved"), ("rejected", "rejected"),
                                             ("approved", "rejected"), ("approved", "approved")]):
            gate.decide(f"rv-d{i}", "alice", first, "" if first == "approved" else "no")
            gate.decide(f"rv-d{i}", "bob", second, "" if second == "approved" else "no")
        report = gate.publish_stats()
    finally:
        feed.stop()
        publisher.close()
    assert report is not None and report.pairs == 4
    # pairs (a,a) (r,r) (a,r) (a,a): p_o = 3/4, p_e = 3/4·2/4 + 1/4·2/4 = 1/2 → κ = 0.5
    assert report.kappa == pytest.approx(0.5)
    assert gate.queue.items["rv-d2"].status == "waiting"  # disagreement: a third reviewer
    with TypedBatchConsumer(bootstrap, [topics.reviews], group_id=None) as consumer:
        seen: list = []
        wait_for(lambda: seen.extend(r.event for r in consumer.poll_batch(200)) or any(
            e.type == "review.stats_reported" for e in seen), what="the stats event")
    stats = [e for e in seen if e.type == "review.stats_reported"]
    assert stats[0].kappa == pytest.approx(0.5)
    assert {r.reviewer: r.decisions for r in stats[0].reviewers} == {"alice": 4, "bob": 4}
