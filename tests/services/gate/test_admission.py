"""GateAdmission: the gate as the curator's admission policy."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from schemas.reviews import ReviewDecided, ReviewRequested
from services.dataflow.admission import Admission as Admitted
from services.dataflow.admission import Rejection as Refused
from services.dataflow.admission_policy import AdmissionPolicy, PolicySettings
from services.dataflow.gate_admission import POLICY_REVIEWER, GateAdmission
from services.dataflow.signing import Signer
from services.dataflow.verify import DecisionVerifier

ENVELOPE = {"source": "curator/1", "correlation_id": "run-1"}


def request(n: int = 0, **overrides: object) -> ReviewRequested:
    fields = {"review_id": f"rv-{n}", "subject": "episode", "subject_ids": [f"ep-{n}"],
              "summary": "s", "score": 1.0, "template": "note_phone_of_relation", **ENVELOPE}
    return ReviewRequested(**{**fields, **overrides})


def gate_admission(signer: Signer | None, **settings: object) -> GateAdmission:
    config = PolicySettings(**{"audit_rate": 0.0, "double_review_rate": 0.0,
                               "new_template_threshold": 0, **settings})
    verifier = DecisionVerifier(signer.public_key if signer else None)
    return GateAdmission(verifier, AdmissionPolicy(config))


def human(signer: Signer, review_id: str, n: int = 1, **overrides: object) -> ReviewDecided:
    fields = {"review_id": review_id, "decision": "approved", "reviewer": "alice",
              "decision_id": f"d-{review_id}-{n}", "source": "gate/1", "correlation_id": "run-1"}
    return signer.sign(ReviewDecided(**{**fields, **overrides}))


@pytest.fixture
def signer() -> Signer:
    return Signer(Ed25519PrivateKey.generate())


def test_a_verified_success_is_admitted_by_the_policy_once(signer: Signer) -> None:
    policy = gate_admission(signer)
    asked = policy.annotate(request(), checker="final_state")
    assert asked.reasons == [] and not asked.double_review
    decision = policy.decide_request(asked)
    assert decision is not None and decision.reviewer == POLICY_REVIEWER
    result = policy.verify(decision)
    assert result == Admitted("rv-0", decision.event_id, ("ep-0",))
    assert policy.verify(decision) == Refused("rv-0", decision.event_id, "replay")
    assert policy.auto_admitted == 1
    assert "5%" in gate_admission(signer, audit_rate=0.05).name


def test_audited_and_uncertain_items_wait_for_a_signed_human_decision(signer: Signer) -> None:
    policy = gate_admission(signer, audit_rate=1.0)
    asked = policy.annotate(request(), checker="final_state")
    assert asked.reasons == ["audit"]
    assert policy.decide_request(asked) is None
    partial = policy.annotate(request(1, score=0.5), checker="final_state")
    assert "partial_score" in partial.reasons and policy.decide_request(partial) is None
    forged = Signer(Ed25519PrivateKey.generate())
    rejected = policy.verify(ReviewDecided.model_validate(
        {**human(forged, "rv-1").model_dump(), "key_id": signer.key_id}))
    assert isinstance(rejected, Refused) and rejected.reason == "bad_signature"


def test_a_person_admission_is_an_admission_of_the_requested_ids(signer: Signer) -> None:
    policy = gate_admission(signer, audit_rate=1.0)
    policy.decide_request(policy.annotate(request(), checker="final_state"))
    decision = human(signer, "rv-0")
    assert policy.verify(decision) == Admitted("rv-0", decision.event_id, ("ep-0",))
    assert policy.person_admitted == 1


def test_a_policy_decision_the_policy_did_not_make_is_refused(signer: Signer) -> None:
    policy = gate_admission(signer, audit_rate=1.0)
    policy.decide_request(policy.annotate(request()))  # goes to a person
    fake = ReviewDecided(review_id="rv-0", decision="approved", reviewer=POLICY_REVIEWER,
                         decision_id="whatever", approved_ids=["ep-0"], **ENVELOPE)
    assert policy.verify(fake).reason == "forged_policy_decision"
    assert policy.verifier.rejected["forged_policy_decision"] == 1


def test_new_templates_go_to_people_until_enough_were_admitted(signer: Signer) -> None:
    policy = gate_admission(signer, new_template_threshold=1)
    first = policy.annotate(request(0))
    assert first.reasons == ["new_template"]
    policy.decide_request(first)
    policy.verify(human(signer, "rv-0"))
    second = policy.annotate(request(1))
    assert second.reasons == [] and policy.decide_request(second) is not None


def test_without_the_gate_key_people_admit_nothing_but_the_policy_still_does() -> None:
    policy = gate_admission(None, audit_rate=0.0)
    assert "people admit nothing" in policy.name
    auto = policy.decide_request(policy.annotate(request(0)))
    assert auto is not None and isinstance(policy.verify(auto), Admitted)
    person = ReviewDecided(review_id="rv-0", decision="approved", reviewer="alice",
                           decision_id="d", key_id="k", signature="00", **ENVELOPE)
    assert policy.verify(person).reason == "no_key"


def test_a_first_opinion_admits_nothing_yet(signer: Signer) -> None:
    policy = gate_admission(signer, audit_rate=1.0, double_review_rate=1.0)
    asked = policy.annotate(request())
    assert asked.double_review
    policy.decide_request(asked)
    first = policy.verify(human(signer, "rv-0", final=False))
    assert isinstance(first, Refused) and first.reason.startswith("first opinion")
    second = policy.verify(human(signer, "rv-0", 2, reviewer="bob"))
    assert isinstance(second, Admitted)
