"""Signed vetoes: the gate signs a person's `harness.vetoed` with its Ed25519 key, the evolver
checks the signature before it rejects anything.

The same key signs review decisions (`services.dataflow.signing`); a different domain prefix keeps
a decision's signature from ever passing as a veto's and the other way round. How the evolver
uses it::

    verifier = VetoVerifier.for_data_dir(bus.data_dir)   # <data dir>/gate/signing_key.pub
    reason = verifier.check(vetoed)                      # None: signed by the gate
    if reason is not None:
        log(reason)                                       # refused, the promotion goes on

The public key is read when the first veto arrives (and again until it exists), so an evolver
started before the gate created its key still checks vetoes once the gate runs.
"""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path
from typing import Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from schemas.harness import HarnessVetoed
from services.dataflow.signing import (
    Signer,
    canonical_payload,
    key_id_of,
    load_public_key,
    public_key_path,
    signature_holds,
)

__all__ = [
    "VETO_DOMAIN",
    "VetoRefusal",
    "VetoVerifier",
    "check_veto_signature",
    "sign_veto",
    "veto_payload",
]

logger = logging.getLogger(__name__)

#: Prefixed to every signed veto (domain separation from review decisions).
VETO_DOMAIN = b"flywheel.harness.vetoed/v1\n"

VetoRefusal = Literal[
    "no_key",         # the evolver has no gate public key: it cannot tell who vetoed
    "unsigned",       # no signature or key id (a hand-made event)
    "unknown_key",    # signed by a key the evolver does not trust
    "bad_signature",  # forged, or altered after signing
]


def veto_payload(veto: HarnessVetoed) -> bytes:
    """The canonical bytes a veto's signature covers: every field that gives it meaning."""
    body = {"event_id": veto.event_id, "proposal_id": veto.proposal_id,
            "reviewer": veto.reviewer, "note": veto.note, "key_id": veto.key_id,
            "correlation_id": veto.correlation_id}
    return canonical_payload(VETO_DOMAIN, body)


def sign_veto(signer: Signer, veto: HarnessVetoed) -> HarnessVetoed:
    """`veto` with the signer's key id and signature (validated again)."""
    unsigned = HarnessVetoed.model_validate(
        {**veto.model_dump(), "key_id": signer.key_id, "signature": None})
    signature = signer.sign_bytes(veto_payload(unsigned)).hex()
    return HarnessVetoed.model_validate({**unsigned.model_dump(), "signature": signature})


def check_veto_signature(public_key: Ed25519PublicKey, veto: HarnessVetoed) -> bool:
    """True when `veto.signature` is `public_key`'s signature over its canonical bytes."""
    if veto.signature is None:
        return False
    return signature_holds(public_key, veto.signature, veto_payload(veto))


class VetoVerifier:
    """Checks vetoes against the gate's public key; counts refusals by reason (`refused`)."""

    def __init__(self, public_key: Ed25519PublicKey | None = None, *,
                 path: Path | None = None) -> None:
        self._key = public_key
        self._path = path
        self.accepted = 0
        self.refused: Counter[str] = Counter()

    @classmethod
    def for_data_dir(cls, data_dir: Path, public_key: Path | None = None) -> VetoVerifier:
        """Trusts `public_key`, default the `.pub` next to the gate's key in `data_dir`
        (<data dir>/gate/signing_key.pub); read on the first veto, not now."""
        path = public_key or public_key_path(Path(data_dir) / "gate" / "signing_key.pem")
        return cls(path=Path(path))

    def _public_key(self) -> Ed25519PublicKey | None:
        if self._key is None and self._path is not None and self._path.exists():
            self._key = load_public_key(self._path)  # GateKeyError: one sentence
        return self._key

    def check(self, veto: HarnessVetoed) -> VetoRefusal | None:
        """None when the gate signed `veto`, else why it is refused (logged and counted)."""
        reason = self._reason(veto)
        if reason is None:
            self.accepted += 1
        else:
            self.refused[reason] += 1
            where = f" (no gate public key at {self._path})" if reason == "no_key" else ""
            logger.warning("veto of %s by %s refused: %s%s", veto.proposal_id, veto.reviewer,
                           reason, where)
        return reason

    def _reason(self, veto: HarnessVetoed) -> VetoRefusal | None:
        key = self._public_key()
        if key is None:
            return "no_key"
        if veto.signature is None or veto.key_id is None:
            return "unsigned"
        if veto.key_id != key_id_of(key):
            return "unknown_key"
        if not check_veto_signature(key, veto):
            return "bad_signature"
        return None
