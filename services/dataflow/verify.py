"""The curator's check on a review decision before it admits anything: signature, review id,
replay, self-approval. Rejections are counted by reason.

How the curator uses it::

    verifier = DecisionVerifier.for_data_dir(bus.data_dir)   # no gate key yet → fails closed
    verifier.expect(request)              # for every review.requested it publishes (or reads back)
    result = verifier.verify(decided)     # for every review.decided it consumes
    if result.admits:                     # accepted, final and approved
        admit(result.admitted_ids)        # the episode ids to let into a snapshot
    else:
        log(result.reason)                # accepted non-final opinions have reason None

Rebuild after a restart by feeding the reviews topic from its start through `expect` and
`verify` in order: the outcome is a fold over the events, so it comes out the same.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from schemas.reviews import ReviewDecided, ReviewRequested
from services.dataflow.signing import check_signature, key_id_of, load_public_key, public_key_path

__all__ = ["DecisionVerifier", "RejectReason", "Verification"]

logger = logging.getLogger(__name__)

RejectReason = Literal[
    "no_key",            # the curator has no gate public key: nothing needing a person is admitted
    "unsigned",          # no signature, key id or decision id (a v1-shaped or hand-made decision)
    "unknown_key",       # signed by a key the curator does not trust
    "bad_signature",     # forged or altered after signing
    "unknown_review",    # no review.requested with that id was seen
    "not_in_review",     # approves ids the request did not ask about
    "self_approval",     # the reviewer wrote the item
    "replay",            # this decision id was seen before
    "same_reviewer",     # the second opinion of a double review came from the first reviewer
    "already_decided",   # the review already has a final decision
]


@dataclass(frozen=True)
class Verification:
    """The outcome for one decision: `accepted`, or rejected with a `reason`."""

    decision: ReviewDecided
    accepted: bool
    reason: RejectReason | None = None
    admitted_ids: tuple[str, ...] = ()

    @property
    def admits(self) -> bool:
        """True when the curator may admit `admitted_ids`: accepted, final and approved."""
        return self.accepted and self.decision.final and self.decision.decision == "approved"


@dataclass
class _Review:
    subject_ids: tuple[str, ...]
    submitted_by: str | None
    opinions: set[str]
    decided: bool = False


class DecisionVerifier:
    """Checks signed review decisions against the gate's public key(s) and the requests seen.

    `public_keys` is one key, a mapping key id → key (rotation), or None: then every
    decision is rejected as `no_key` (fail closed). Counters: `accepted`, `rejected[reason]`.
    """

    def __init__(self, public_keys: Ed25519PublicKey | Mapping[str, Ed25519PublicKey] | None,
                 ) -> None:
        if public_keys is None:
            self._keys: dict[str, Ed25519PublicKey] = {}
            self.closed = True
        elif isinstance(public_keys, Ed25519PublicKey):
            self._keys = {key_id_of(public_keys): public_keys}
            self.closed = False
        else:
            self._keys = dict(public_keys)
            self.closed = not self._keys
        self._reviews: dict[str, _Review] = {}
        self._seen: set[str] = set()
        self.accepted = 0
        self.rejected: Counter[str] = Counter()

    @classmethod
    def from_public_key_file(cls, path: Path | None) -> DecisionVerifier:
        """A verifier trusting the PEM key at `path`; None gives a closed verifier. A path that
        does not hold a key raises signing.GateKeyError with one sentence."""
        return cls(None if path is None else load_public_key(Path(path)))

    @classmethod
    def for_data_dir(cls, data_dir: Path, key_path: Path | None = None) -> DecisionVerifier:
        """The verifier for the gate of `data_dir`: it trusts `<key>.pub` next to the gate's
        key (FLYWHEEL_GATE_KEY_PATH, default <data dir>/gate/signing_key.pem), and is closed
        when there is none yet (start the gate first: `flywheel run` creates the key)."""
        private = key_path or Path(data_dir) / "gate" / "signing_key.pem"
        public = public_key_path(private)
        if not public.exists():
            logger.warning("no gate public key at %s: admitting nothing that needs a person",
                           public)
            return cls(None)
        return cls.from_public_key_file(public)

    def expect(self, request: ReviewRequested) -> None:
        """Records a review the curator asked for (idempotent: a redelivery changes nothing)."""
        if request.review_id not in self._reviews:
            self._reviews[request.review_id] = _Review(tuple(request.subject_ids),
                                                       request.submitted_by, set())

    def verify(self, decision: ReviewDecided) -> Verification:
        """Accepts or rejects `decision`; an accepted one is remembered (its id, its reviewer)."""
        reason = self._check(decision)
        if reason is not None:
            self.rejected[reason] += 1
            logger.warning("rejected review decision %s for %s: %s", decision.decision_id,
                           decision.review_id, reason)
            return Verification(decision, False, reason)
        review = self._reviews[decision.review_id]
        assert decision.decision_id is not None  # _check rejected unsigned decisions
        self._seen.add(decision.decision_id)
        review.opinions.add(decision.reviewer)
        admitted: tuple[str, ...] = ()
        if decision.final:
            review.decided = True
            if decision.decision == "approved":
                admitted = tuple(decision.approved_ids) or review.subject_ids
        self.accepted += 1
        return Verification(decision, True, None, admitted)

    def _check(self, decision: ReviewDecided) -> RejectReason | None:
        if self.closed:
            return "no_key"
        if decision.signature is None or decision.key_id is None or decision.decision_id is None:
            return "unsigned"
        key = self._keys.get(decision.key_id)
        if key is None:
            return "unknown_key"
        if not check_signature(key, decision):
            return "bad_signature"
        review = self._reviews.get(decision.review_id)
        if review is None:
            return "unknown_review"
        if not set(decision.approved_ids) <= set(review.subject_ids):
            return "not_in_review"
        if decision.reviewer in {review.submitted_by, decision.submitted_by}:
            return "self_approval"
        if decision.decision_id in self._seen:
            return "replay"
        if review.decided:
            return "already_decided"
        if decision.reviewer in review.opinions:
            return "same_reviewer"
        return None

    @property
    def rejected_total(self) -> int:
        return sum(self.rejected.values())
