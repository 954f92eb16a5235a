"""DecisionVerifier: what the curator admits, and every way a decision is refused."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from schemas.reviews import ReviewDecided, ReviewRequested
from services.dataflow.signing import Signer
from services.dataflow.verify import DecisionVerifier

ENVELOPE = {"source": "test/0", "correlation_id": "run-1"}


def request(review_id: str = "rv-1", **overrides: object) -> ReviewRequested:
    fields = {"review_id": review_id, "subject": "episode", "subject_ids": ["ep-1", "ep-2"],
              "summary": "s", **ENVELOPE}
    return ReviewRequested(**{**fields, **overrides})


def unsigned(n: int = 1, **overrides: object) -> ReviewDecided:
    fields = {"review_id": "rv-1", "decision": "approved", "reviewer": "alice",
              "decision_id": f"d-{n}", **ENVELOPE}
    return ReviewDecided(**{**fields, **overrides})


@pytest.fixture
def signer() -> Signer:
    return Signer(Ed25519PrivateKey.generate())


@pytest.fixture
def verifier(signer: Signer) -> DecisionVerifier:
    v = DecisionVerifier(signer.public_key)
    v.expect(request())
    return v


def test_a_signed_approval_of_a_known_review_admits_its_episodes(
        signer: Signer, verifier: DecisionVerifier) -> None:
    result = verifier.verify(signer.sign(unsigned()))
    assert result.accepted and result.admits
    assert result.admitted_ids == ("ep-1", "ep-2")
    assert verifier.accepted == 1 and verifier.rejected_total == 0


def test_a_partial_approval_admits_only_the_named_ids(signer: Signer,
                                                      verifier: DecisionVerifier) -> None:
    result = verifier.verify(signer.sign(unsigned(approved_ids=["ep-2"])))
    assert result.admitted_ids == ("ep-2",)


def test_a_rejection_is_accepted_but_admits_nothing(signer: Signer,
                                                    verifier: DecisionVerifier) -> None:
    result = verifier.verify(signer.sign(unsigned(decision="rejected", reason="wrong")))
    assert result.accepted and not result.admits and result.admitted_ids == ()


@pytest.mark.parametrize("case", ["forged", "altered", "unsigned", "unknown_review",
                                  "not_in_review", "self_request", "self_claimed"])
def test_bad_decisions_are_rejected_with_their_reason(case: str, signer: Signer,
                                                      verifier: DecisionVerifier) -> None:
    verifier.expect(request("rv-own", submitted_by="alice"))
    attacker = Signer(Ed25519PrivateKey.generate())
    decision, reason = {
        # signed by a key the curator does not trust, claiming the gate's key id
        "forged": (ReviewDecided.model_validate({
            **attacker.sign(unsigned()).model_dump(), "key_id": signer.key_id}), "bad_signature"),
        "altered": (ReviewDecided.model_validate({
            **signer.sign(unsigned(decision="rejected", reason="r")).model_dump(),
            "decision": "approved"}), "bad_signature"),
        "unsigned": (unsigned(), "unsigned"),
        "unknown_review": (signer.sign(unsigned(review_id="rv-nope")), "unknown_review"),
        "not_in_review": (signer.sign(unsigned(approved_ids=["ep-9"])), "not_in_review"),
        "self_request": (signer.sign(unsigned(review_id="rv-own")), "self_approval"),
        "self_claimed": (signer.sign(unsigned(submitted_by="alice")), "self_approval"),
    }[case]
    result = verifier.verify(decision)
    assert not result.accepted and not result.admits
    assert result.reason == reason
    assert verifier.rejected[reason] == 1 and verifier.accepted == 0


def test_an_unknown_key_id_is_rejected(verifier: DecisionVerifier) -> None:
    other = Signer(Ed25519PrivateKey.generate())
    assert verifier.verify(other.sign(unsigned())).reason == "unknown_key"


def test_a_replayed_decision_is_rejected_and_counted(signer: Signer,
                                                     verifier: DecisionVerifier) -> None:
    decision = signer.sign(unsigned(decision="rejected", reason="no"))
    assert verifier.verify(decision).accepted
    again = ReviewDecided.model_validate({**decision.model_dump(), "event_id": "fresh-id"})
    assert verifier.verify(again).reason == "replay"
    assert verifier.rejected["replay"] == 1


def test_a_second_final_decision_is_rejected(signer: Signer, verifier: DecisionVerifier) -> None:
    assert verifier.verify(signer.sign(unsigned(1, decision="rejected", reason="x"))).accepted
    result = verifier.verify(signer.sign(unsigned(2, reviewer="bob")))
    assert result.reason == "already_decided" and not result.admits


def test_double_review_admits_on_the_final_opinion_only(signer: Signer,
                                                        verifier: DecisionVerifier) -> None:
    first = verifier.verify(signer.sign(unsigned(1, final=False)))
    assert first.accepted and not first.admits
    same = verifier.verify(signer.sign(unsigned(2, final=True)))
    assert same.reason == "same_reviewer"
    second = verifier.verify(signer.sign(unsigned(3, reviewer="bob")))
    assert second.admits and second.admitted_ids == ("ep-1", "ep-2")


def test_without_a_key_the_verifier_fails_closed(signer: Signer) -> None:
    closed = DecisionVerifier(None)
    closed.expect(request())
    result = closed.verify(signer.sign(unsigned()))
    assert not result.accepted and result.reason == "no_key"
    assert DecisionVerifier.from_public_key_file(None).closed
    assert DecisionVerifier({}).closed


def test_expect_is_idempotent(signer: Signer, verifier: DecisionVerifier) -> None:
    verifier.expect(request(subject_ids=["other"]))  # a redelivery does not replace the first
    assert verifier.verify(signer.sign(unsigned(approved_ids=["ep-1"]))).accepted
