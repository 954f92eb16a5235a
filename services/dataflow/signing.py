"""Ed25519 keys of the gate and the canonical bytes a signed review decision covers."""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from schemas.reviews import ReviewDecided

__all__ = [
    "PRIVATE_KEY_MODE",
    "SIGNATURE_DOMAIN",
    "GateKeyError",
    "Signer",
    "canonical_payload",
    "check_signature",
    "create_key",
    "key_id_of",
    "load_private_key",
    "load_public_key",
    "public_key_path",
    "signature_holds",
    "signed_payload",
]

logger = logging.getLogger(__name__)

#: Prefixed to every signed payload so a gate signature can never be reused as a signature
#: over some other kind of message (domain separation); bump the version with the field list.
SIGNATURE_DOMAIN = b"flywheel.review.decided/v1\n"
#: The private key is readable by its owner only.
PRIVATE_KEY_MODE = 0o600
#: Hex characters of sha256(public key) that name a key: 64 bits tell rotated keys apart.
KEY_ID_CHARS = 16


class GateKeyError(ValueError):
    """A key file is missing, unreadable or not an Ed25519 key; the message says which."""


def signed_payload(decision: ReviewDecided) -> bytes:
    """The canonical bytes a decision's signature covers: every field that gives it meaning
    (not the envelope's id and time, which a redelivery may not change anyway)."""
    body = {
        "review_id": decision.review_id, "decision_id": decision.decision_id,
        "decision": decision.decision, "reviewer": decision.reviewer, "reason": decision.reason,
        "approved_ids": list(decision.approved_ids), "submitted_by": decision.submitted_by,
        "final": decision.final, "key_id": decision.key_id,
        "correlation_id": decision.correlation_id,
    }
    return canonical_payload(SIGNATURE_DOMAIN, body)


def canonical_payload(domain: bytes, body: Mapping[str, object]) -> bytes:
    """`domain` then `body` as canonical JSON (sorted keys, no spaces, ASCII only): the bytes
    a signature covers, the same on every machine."""
    return domain + json.dumps(body, sort_keys=True, separators=(",", ":"),
                               ensure_ascii=True).encode()


def key_id_of(public_key: Ed25519PublicKey) -> str:
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:KEY_ID_CHARS]


def public_key_path(private_path: Path) -> Path:
    return private_path.with_suffix(".pub")


def create_key(path: Path) -> Ed25519PrivateKey:
    """A new key written to `path` (mode 0600, created exclusively: never overwrites) and its
    public half to `path.pub`."""
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_KEY_MODE)
    with os.fdopen(fd, "wb") as handle:
        handle.write(pem)
    os.chmod(path, PRIVATE_KEY_MODE)  # the umask may have narrowed it further; make it exact
    public_key_path(path).write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    logger.info("created gate signing key %s (key id %s)", path, key_id_of(key.public_key()))
    return key


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """The gate's key from `path`; refuses a key file others can read."""
    try:
        mode = path.stat().st_mode & 0o777
        data = path.read_bytes()
    except OSError as error:
        raise GateKeyError(f"cannot read the gate signing key {path} ({error.strerror}); set "
                        "FLYWHEEL_GATE_KEY_PATH to an Ed25519 key or create one with "
                        "'flywheel gate keygen'") from None
    if mode & 0o077:
        raise GateKeyError(f"the gate signing key {path} is readable by others (mode "
                        f"{mode:o}); run 'chmod 600 {path}'")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as error:
        raise GateKeyError(f"{path} is not a PEM private key ({error})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise GateKeyError(f"{path} holds a {type(key).__name__}, not an Ed25519 key")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    """A gate public key (PEM) from `path`, as the curator loads it."""
    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except OSError as error:
        raise GateKeyError(f"cannot read the gate public key {path} ({error.strerror})") from None
    except (ValueError, TypeError) as error:
        raise GateKeyError(f"{path} is not a PEM public key ({error})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise GateKeyError(f"{path} holds a {type(key).__name__}, not an Ed25519 public key")
    return key


def check_signature(public_key: Ed25519PublicKey, decision: ReviewDecided) -> bool:
    """True when `decision.signature` is `public_key`'s signature over its canonical bytes."""
    if decision.signature is None:
        return False
    return signature_holds(public_key, decision.signature, signed_payload(decision))


def signature_holds(public_key: Ed25519PublicKey, signature: str, payload: bytes) -> bool:
    """True when `signature` (hex) is `public_key`'s signature over `payload`; a signature
    that is not hex, or not this key's, is False."""
    try:
        public_key.verify(bytes.fromhex(signature), payload)
    except (InvalidSignature, ValueError):
        return False
    return True


class Signer:
    """Signs decisions with one private key."""

    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key
        self.public_key = key.public_key()
        self.key_id = key_id_of(self.public_key)

    def sign_bytes(self, payload: bytes) -> bytes:
        """This key's signature over `payload` (callers prefix their own domain)."""
        return self._key.sign(payload)

    def sign(self, decision: ReviewDecided) -> ReviewDecided:
        """`decision` with this key's id and signature (validated: the producer need not)."""
        unsigned = ReviewDecided.model_validate(
            {**decision.model_dump(), "key_id": self.key_id, "signature": None})
        signature = self._key.sign(signed_payload(unsigned)).hex()
        return ReviewDecided.model_validate({**unsigned.model_dump(), "signature": signature})
