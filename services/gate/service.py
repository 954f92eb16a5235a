"""The gate's core: the queue fed from the topics, decisions signed and published.

`Gate` is what the web app, the terminal review and the bench drive; `GateFeed` is the
thin consumer loop that folds the tasks, episodes, verdicts, failures and reviews topics
into its queue, and the harness topic into its harness board (pending promotions a person
may veto: `Gate.veto` signs and publishes `harness.vetoed`). The feed reads every topic from the start without a consumer group, so a
restarted gate rebuilds the same queue (decisions included, read back from the reviews topic).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from devices.blobs import BlobNotFound, BlobStore
from schemas.envelope import Event
from schemas.harness import HarnessVetoed
from schemas.reviews import ReviewDecided, ReviewStatsReported
from schemas.topics import TOPICS, Topic
from services.dataflow.signing import Signer, check_signature
from services.dataflow.vetoes import check_veto_signature, sign_veto
from services.gate.diff import episode_diff
from services.gate.harness import HarnessBoard, VetoRefused
from services.gate.queue import DecisionRefused, Item, ReviewQueue, TaskInfo, next_decision
from services.gate.tokens import ReviewerTokens
from streams.consumer import TypedBatchConsumer
from streams.producer import TypedProducer

__all__ = [
    "FEED_TOPICS",
    "BrokerPublisher",
    "DecisionNotPublished",
    "Gate",
    "GateFeed",
    "GateTopics",
    "Publisher",
]

logger = logging.getLogger(__name__)

#: The registered topics the gate reads, by role.
FEED_TOPICS = ("flywheel.tasks", "flywheel.episodes", "flywheel.verdicts", "flywheel.failures",
               "flywheel.reviews", "flywheel.harness")
SOURCE = "gate/1"
#: Lock stripes for decisions: far more than concurrent reviewers, so unrelated items rarely
#: share one.
ITEM_LOCKS = 64
#: State diffs computed by the gate, kept per episode (each costs a SimPhone reset).
DIFF_CACHE = 1024


class DecisionNotPublished(RuntimeError):
    """The broker did not acknowledge a signed decision: it was not taken (retrying is safe)."""


class Publisher(Protocol):
    def publish(self, event: Event) -> None:
        """Sends `event` and returns once the broker acknowledged it (or raises)."""
        ...


@dataclass(frozen=True)
class GateTopics:
    """The topics the gate reads and writes (tests pass fresh, renamed copies)."""

    tasks: Topic
    episodes: Topic
    verdicts: Topic
    failures: Topic
    reviews: Topic
    harness: Topic | None = None  # pending promotions and vetoes (None: no harness page)

    @classmethod
    def registered(cls) -> GateTopics:
        return cls(*(TOPICS[name] for name in FEED_TOPICS))

    def all(self) -> list[Topic]:
        return [self.tasks, self.episodes, self.verdicts, self.failures, self.reviews,
                *([self.harness] if self.harness is not None else [])]


class BrokerPublisher:
    """Publishes to the reviews topic (vetoes: the harness topic) with the typed idempotent
    producer, waiting for acks."""

    def __init__(self, bootstrap: str, reviews: Topic, timeout_s: float = 10.0, *,
                 harness: Topic | None = None) -> None:
        self._producer = TypedProducer(bootstrap, client_id="gate")
        self.reviews = reviews
        self.harness = harness if harness is not None else TOPICS["flywheel.harness"]
        self.timeout_s = timeout_s

    def publish(self, event: Event) -> None:
        topic = self.harness if isinstance(event, HarnessVetoed) else self.reviews
        self._producer.send(topic, event).get(timeout=self.timeout_s)

    def close(self) -> None:
        self._producer.close()


class Gate:
    """A review queue, a signing key and a publisher: everything a reviewer's action needs.

    Refuses to exist without a key (fail closed): there is no unsigned mode.
    """

    def __init__(self, key: Ed25519PrivateKey, tokens: ReviewerTokens, publisher: Publisher,
                 *, queue: ReviewQueue | None = None, blobs: BlobStore | None = None,
                 clock: Callable[[], float] = time.time,
                 harness: HarnessBoard | None = None) -> None:
        if not isinstance(key, Ed25519PrivateKey):
            raise TypeError("the gate needs an Ed25519 private key to sign decisions; "
                            "without one it does not start")
        self.signer = Signer(key)
        self.tokens = tokens
        self.publisher = publisher
        self.queue = queue or ReviewQueue()
        if self.queue.trust is None:
            public = self.signer.public_key
            self.queue.trust = lambda decision: check_signature(public, decision)
        #: Pending harness promotions (None: this gate does not read the harness topic).
        self.harness = harness
        if harness is not None and harness.trust is None:
            public = self.signer.public_key
            harness.trust = lambda vetoed: check_veto_signature(public, vetoed)
        self._veto_lock = threading.Lock()
        self.vetoed = 0
        self.blobs = blobs
        self.clock = clock
        self._item_locks = tuple(threading.Lock() for _ in range(ITEM_LOCKS))
        self.decided = 0
        self.refused = 0
        self._diffs: OrderedDict[str, list[dict[str, Any]] | None] = OrderedDict()
        self._stats_version = 0  # opinions at the last report: nothing to report yet

    def _item_lock(self, review_id: str) -> threading.Lock:
        # Striped: two decisions on one item are serialised (the second sees the first), while
        # decisions on different items rarely wait; memory stays fixed however many items.
        return self._item_locks[hash(review_id) % ITEM_LOCKS]

    def opened(self, review_id: str, reviewer: str) -> None:
        """Notes when `reviewer` first opened the item (for time-per-decision)."""
        with self.queue.lock:
            item = self.queue.items.get(review_id)
            if item is not None:
                item.opened_at.setdefault(reviewer, self.clock())

    def decide(self, review_id: str, reviewer: str, decision: str, reason: str = "",
               approved_ids: Sequence[str] = ()) -> ReviewDecided:
        """Signs and publishes `reviewer`'s decision; returns it once the broker acked it.
        Raises DecisionRefused (for people) when the rules forbid it, DecisionNotPublished when
        the broker did not acknowledge it (nothing was taken), KeyError when the review is
        unknown."""
        with self._item_lock(review_id):
            with self.queue.lock:
                item = self.queue.items.get(review_id)
                if item is None:
                    raise KeyError(f"no review {review_id!r} is in the queue")
                try:
                    unsigned = next_decision(item, reviewer, decision, reason, approved_ids,
                                             blocked=self.queue.admission_block(item))
                except DecisionRefused:
                    self.refused += 1
                    raise
            signed = self.signer.sign(unsigned)
            self._publish_acked(signed, f"the decision on {review_id}")
            self.queue.apply(signed)
            self.decided += 1
        return signed

    def _publish_acked(self, signed: Any, what: str) -> None:
        """Publishes `signed`; DecisionNotPublished (one sentence naming `what`) unless the broker acked it."""
        try:
            self.publisher.publish(signed)
        except Exception as error:  # noqa: BLE001 - any client error means "not acked"
            logger.warning("%s not acknowledged: %s", what, error)
            raise DecisionNotPublished(
                f"the broker did not acknowledge {what} ({error}); it was not taken, try again") from None

    def veto(self, proposal_id: str, reviewer: str, note: str = "") -> HarnessVetoed:
        """Signs and publishes `reviewer`'s veto of a pending promotion; returns it once the
        broker acked it. Raises KeyError (one sentence) for a proposal the gate never saw,
        VetoRefused when it is not pending (promoted, rejected, already vetoed) or this gate
        has no harness board, DecisionNotPublished when the broker did not acknowledge it."""
        if self.harness is None:
            raise VetoRefused("this gate does not read the harness topic, so it cannot veto "
                              "promotions")
        with self._veto_lock:
            signed = sign_veto(self.signer, self.harness.veto_event(proposal_id, reviewer, note))
            self._publish_acked(signed, f"the veto of {proposal_id}")
            self.harness.apply(signed)
            self.vetoed += 1
        logger.info("%s vetoed the promotion of %s", reviewer, proposal_id)
        return signed

    def state_diff(self, episode: Any, info: TaskInfo | None) -> list[dict[str, Any]] | None:
        """What `episode` changed, computed by the gate when the verifier did not say: the
        task's initial state (a SimPhone reset to the instance the task event carries) against
        the final state the rollout stored in the blob store (`episode.final_state`). None
        when either is missing. Cached per episode (an ended episode never changes)."""
        ref = getattr(episode, "final_state", None)
        if ref is None or self.blobs is None or info is None or info.instance is None:
            return None
        key = episode.episode_id
        if key not in self._diffs:
            try:
                final = json.loads(self.blobs.get(ref.sha256))
                self._diffs[key] = episode_diff(info.instance, final)
            except (BlobNotFound, ValueError, TypeError, KeyError) as error:
                logger.warning("no state diff for episode %s: %s", key, error)
                self._diffs[key] = None
            if len(self._diffs) > DIFF_CACHE:
                self._diffs.popitem(last=False)
        return self._diffs[key]

    def next_for(self, reviewer: str, after: str | None = None) -> Item | None:
        """The next waiting item `reviewer` may decide, after `after` in queue order."""
        return self.queue.next_waiting(reviewer, after)

    def stats_event(self, correlation_id: str = "gate") -> ReviewStatsReported:
        kappa, pairs = self.queue.kappa()
        counts = self.queue.counts()
        alpha = {family: a for family, (a, _) in self.queue.alpha_by_family().items()}
        return ReviewStatsReported(
            decisions=counts["opinions"], pairs=pairs, kappa=kappa, alpha_by_family=alpha,
            waiting=counts["waiting"],
            reviewers=self.queue.throughput(), source=SOURCE, correlation_id=correlation_id)

    def publish_stats(self, *, force: bool = False) -> ReviewStatsReported | None:
        """Publishes κ and throughput when anything was decided since the last report."""
        decided = self.queue.counts()["opinions"]
        if not force and decided == self._stats_version:
            return None
        event = self.stats_event()
        self.publisher.publish(event)
        self._stats_version = decided
        return event


class GateFeed:
    """The consumer loop: folds the topics into the gate's queue until stopped."""

    def __init__(self, gate: Gate, bootstrap: str, topics: GateTopics, *,
                 stats_interval_s: float = 30.0, poll_ms: int = 200) -> None:
        self.gate = gate
        self.topics = topics
        self.stats_interval_s = stats_interval_s
        self.poll_ms = poll_ms
        # No group: every start reads everything again, so the queue is a pure fold of the
        # topics; dead letters still go to each topic's .dlq.
        self._consumer = TypedBatchConsumer(bootstrap, topics.all(), group_id=None,
                                            client_id="gate-feed", auto_offset_reset="earliest")
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None
        self.polls = 0

    def poll_once(self) -> int:
        """One poll folded in; returns the records applied."""
        applied = 0
        harness = self.gate.harness
        for record in self._consumer.poll_batch(self.poll_ms):
            if record.event.type.startswith("harness."):
                applied += harness.apply(record.event) if harness is not None else 0
            else:
                applied += self.gate.queue.apply(record.event)
        self.polls += 1
        return applied

    def run(self) -> None:
        last_stats = time.monotonic()
        try:
            while not self._stop.is_set():
                self.poll_once()
                if time.monotonic() - last_stats >= self.stats_interval_s:
                    last_stats = time.monotonic()
                    try:
                        self.gate.publish_stats()
                    except Exception as error:  # noqa: BLE001 - a report can wait for the next tick
                        logger.warning("could not publish review stats: %s", error)
        except BaseException as error:
            self.error = error
            logger.exception("the gate feed stopped")
            raise

    def start(self) -> GateFeed:
        self._thread = threading.Thread(target=self.run, name="gate-feed", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._consumer.close()
