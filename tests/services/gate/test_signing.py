"""Gate keys and signatures: 0600 key files, canonical bytes, tamper detection."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from schemas.reviews import ReviewDecided
from services.dataflow.signing import (
    GateKeyError,
    Signer,
    check_signature,
    create_key,
    key_id_of,
    load_private_key,
    load_public_key,
    public_key_path,
)


def decision(**overrides: object) -> ReviewDecided:
    fields = {"review_id": "rv-1", "decision": "approved", "reviewer": "alice",
              "decision_id": "d-1", "source": "gate/1", "correlation_id": "run-1"}
    return ReviewDecided(**{**fields, **overrides})


def test_created_key_is_owner_only_and_its_public_half_loads(tmp_path: Path) -> None:
    path = tmp_path / "gate" / "signing_key.pem"
    key = create_key(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert key_id_of(load_public_key(public_key_path(path))) == key_id_of(key.public_key())
    assert key_id_of(load_private_key(path).public_key()) == key_id_of(key.public_key())


def test_create_key_never_overwrites_an_existing_key(tmp_path: Path) -> None:
    path = tmp_path / "k.pem"
    create_key(path)
    before = path.read_bytes()
    with pytest.raises(FileExistsError):
        create_key(path)
    assert path.read_bytes() == before


def test_a_key_others_can_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "k.pem"
    create_key(path)
    path.chmod(0o644)
    with pytest.raises(GateKeyError, match="chmod 600"):
        load_private_key(path)


def test_missing_and_garbage_keys_are_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(GateKeyError, match="cannot read the gate signing key"):
        load_private_key(tmp_path / "absent.pem")
    bad = tmp_path / "bad.pem"
    bad.write_text("not a key")
    bad.chmod(0o600)
    with pytest.raises(GateKeyError, match="not a PEM private key"):
        load_private_key(bad)


def test_signature_covers_every_meaningful_field() -> None:
    signer = Signer(Ed25519PrivateKey.generate())
    signed = signer.sign(decision())
    assert signed.key_id == signer.key_id and signed.signature
    assert check_signature(signer.public_key, signed)
    for field, value in [("decision", "rejected"), ("reviewer", "mallory"), ("review_id", "rv-2"),
                         ("approved_ids", ["ep-x"]), ("decision_id", "d-2"), ("final", False),
                         ("reason", "edited"), ("submitted_by", "bob"),
                         ("correlation_id", "run-2")]:
        altered = ReviewDecided.model_validate({**signed.model_dump(), field: value})
        assert not check_signature(signer.public_key, altered), field


def test_another_keys_signature_and_garbage_do_not_verify() -> None:
    ours, theirs = Signer(Ed25519PrivateKey.generate()), Signer(Ed25519PrivateKey.generate())
    forged = theirs.sign(decision())
    assert not check_signature(ours.public_key, forged)
    garbage = ReviewDecided.model_validate({**forged.model_dump(), "signature": "zz" * 64})
    assert not check_signature(ours.public_key, garbage)
    assert not check_signature(ours.public_key, decision())  # unsigned
