"""Signed vetoes and the harness board, without a broker: what the signature covers, which keys
count, and what the board says about each proposal."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from schemas.harness import HarnessChange, HarnessVetoed
from schemas.reviews import ReviewDecided
from services.dataflow.evolution.decide import EvolverConfig
from services.dataflow.signing import Signer, create_key
from services.dataflow.vetoes import VetoVerifier, check_veto_signature, sign_veto
from services.evolver.gate import CachedRunner, evaluate_proposal
from services.gate.harness import HarnessBoard, VetoRefused, change_summary
from tests.services.dataflow.evolution.test_decide import feed, skill_helps, with_failures
from tests.services.evolver.helpers import SPEC, runner

GATE = Signer(Ed25519PrivateKey.generate())
UNSIGNED = HarnessVetoed(source="gate/1", proposal_id="hp-1", reviewer="ana", note="no",
                         correlation_id="run")


def test_a_signed_veto_checks_and_any_change_to_it_does_not() -> None:
    signed = sign_veto(GATE, UNSIGNED)
    assert signed.key_id == GATE.key_id and check_veto_signature(GATE.public_key, signed)
    for field, value in (("proposal_id", "hp-2"), ("reviewer", "eve"), ("note", ""),
                         ("event_id", "x"), ("correlation_id", "other")):
        altered = HarnessVetoed.model_validate({**signed.model_dump(), field: value})
        assert not check_veto_signature(GATE.public_key, altered), field
        assert VetoVerifier(GATE.public_key).check(altered) == "bad_signature"


def test_the_verifier_refuses_unsigned_foreign_and_keyless_vetoes(tmp_path: Path) -> None:
    other = Signer(Ed25519PrivateKey.generate())
    verifier = VetoVerifier(GATE.public_key)
    assert verifier.check(sign_veto(GATE, UNSIGNED)) is None
    assert verifier.check(UNSIGNED) == "unsigned"
    assert verifier.check(sign_veto(other, UNSIGNED)) == "unknown_key"
    # a review decision's signature over the same key never passes as a veto's
    decision = GATE.sign(ReviewDecided(source="gate/1", correlation_id="run", review_id="hp-1",
                                       decision="rejected", reviewer="ana", decision_id="d1"))
    borrowed = HarnessVetoed.model_validate({**UNSIGNED.model_dump(), "key_id": GATE.key_id,
                                             "signature": decision.signature})
    assert verifier.check(borrowed) == "bad_signature"
    assert dict(verifier.refused) == {"unsigned": 1, "unknown_key": 1, "bad_signature": 1}
    # no gate key yet: refused; once the gate created it, the same verifier checks with it
    keyless = VetoVerifier.for_data_dir(tmp_path)
    assert keyless.check(UNSIGNED) == "no_key"
    key = Signer(create_key(tmp_path / "gate" / "signing_key.pem"))
    assert keyless.check(sign_veto(key, UNSIGNED)) is None


def test_change_summaries_say_what_changes() -> None:
    lines = [change_summary(HarnessChange(component=c, op=o, name=n, spec=s)) for c, o, n, s in (
        ("tool", "update", "messages.send", {"description": "Send a text to a contact id."}),
        ("tool", "add", "messages.send", {}),
        ("memory", "update", "top_k", {"value": 10}),
        ("prompt", "add", "playbook bedtime", {"text": "Set the alarm first."}),
        ("skill", "add", "bedtime", {"steps": [{}, {}], "parameters": []}),
        ("subagent", "remove", "trip", {}))]
    assert lines == ["tool description of messages.send: 'Send a text to a contact id.'",
                     "tool messages.send shown to the agent", "memory policy top_k → 10",
                     "new playbook entry 'playbook bedtime': 'Set the alarm first.'",
                     "new skill bedtime (2 steps)", "remove sub-agent trip"]


def test_the_board_lists_what_waits_and_refuses_what_does_not() -> None:
    config = EvolverConfig(veto_window_s=60)
    state, made = with_failures(config)
    evaluations = evaluate_proposal(state.spec, made, CachedRunner(runner(skill_helps)))
    state, out = feed(state, evaluations, config)
    assert out == []  # pending: the window holds it back
    board = HarnessBoard(SPEC, veto_window_s=60, trust=lambda v: check_veto_signature(
        GATE.public_key, v))
    for event in (made, *evaluations):
        assert board.apply(event)
    assert not board.apply(made)  # a redelivery
    since = state.pending_since[made.proposal_id]
    (row,) = board.pending(now=since + timedelta(seconds=45))
    assert row.proposal_id == made.proposal_id and row.seconds_left == 15
    assert row.changes == ("new skill do_text_relative (2 steps)",
                           "new playbook entry 'use do_text_relative': "
                           + repr(made.changes[1].spec["text"]))
    assert (row.dev.split, row.test.split) == ("dev", "test")
    assert row.pending.motivated_by == tuple(made.motivated_by)
    with pytest.raises(KeyError, match="no harness proposal 'hp-x' is known"):
        board.veto_event("hp-x", "ana")
    unsigned = board.veto_event(made.proposal_id, "ana", " too broad ")
    assert unsigned.note == "too broad" and unsigned.signature is None
    assert board.veto_event(made.proposal_id, "ana").event_id != unsigned.event_id  # unguessable
    assert not board.apply(unsigned) and board.untrusted_vetoes == 1  # not the gate's
    assert board.apply(sign_veto(GATE, unsigned))  # the forged one did not take its id
    assert board.pending()[0].vetoed_by == "ana"
    with pytest.raises(VetoRefused, match="already vetoed by ana"):
        board.veto_event(made.proposal_id, "bo")
    # the evolver's answer ends the wait; a veto after it is refused with the reason
    state, out = feed(state, [sign_veto(GATE, unsigned)], config)
    (rejected,) = out
    board.apply(rejected)
    assert board.pending() == []
    with pytest.raises(VetoRefused, match="already rejected \\(vetoed: vetoed by ana"):
        board.veto_event(made.proposal_id, "bo")
