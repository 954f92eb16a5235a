"""The gate's read model: review items built by folding the topics it consumes.

`ReviewQueue.apply(event)` folds one event of the tasks, episodes, verdicts, failures and
reviews topics; it is idempotent (events are deduped on event_id, decisions on decision_id),
so an at-least-once redelivery or a full re-read after a restart builds the same queue. The
queue's rules for a new decision are the pure `next_decision`. The fold mutates in place
(one dict entry per event) rather than copying a state of thousands of trajectories.
"""

from __future__ import annotations

import bisect
import logging
import threading
import uuid
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from schemas.envelope import Event
from schemas.episodes import EpisodeEnded
from schemas.reviews import ReviewDecided, ReviewerThroughput, ReviewRequested
from schemas.tasks import TaskProposed
from schemas.verdicts import FailureTraced, VerdictIssued
from services.gate.gold import GOLD_EVERY, GoldItem
from services.gate.stats import Opinion, cohens_kappa, krippendorff_alpha, throughput

__all__ = [
    "DecisionRefused",
    "Item",
    "ReviewQueue",
    "TaskInfo",
    "next_decision",
]

logger = logging.getLogger(__name__)

#: Episodes no waiting review shows (not asked about yet, or already decided) are kept up to
#: this many, oldest dropped first: a request usually follows its episode within seconds,
#: and 5,000 trajectories of ~50 KiB are ~250 MiB at most.
MAX_UNCLAIMED_EPISODES = 5_000
#: Tasks remembered (oldest dropped first): a task's episodes and review follow it within
#: minutes, and a task with its instance is a few KiB.
MAX_TASKS = 20_000
#: Event ids remembered for dedupe (a redelivery comes within one consumer batch or a
#: restart's re-read, which starts from scratch).
MAX_SEEN_IDS = 200_000

#: Below this Krippendorff's alpha a family's reviewers agree too little for a single opinion to
#: admit its data (the usual bar for tentative conclusions) …
MIN_ALPHA = 0.67
#: … once at least this many of its items were double-reviewed (fewer say nothing yet).
MIN_ALPHA_ITEMS = 5

#: Reasons that put an item before the rest: the automatic checks cannot settle it.
URGENT_REASONS = frozenset({"partial_score", "unverified", "failed", "environment_fault", "policy"})

Verdict = Literal["passed", "partial", "failed", "pending"]
Status = Literal["waiting", "approved", "rejected", "needs_changes"]


class DecisionRefused(ValueError):
    """This reviewer may not decide this item now; the message says why, for people."""


@dataclass(frozen=True)
class TaskInfo:
    goal: str
    template: str
    family: str
    tier: str | None
    instance: dict[str, Any] | None = None  # the whole TaskInstance, when the task carries it


@dataclass
class Item:
    """One review request and the opinions given on it so far."""

    request: ReviewRequested
    seq: int
    opinions: list[ReviewDecided] = field(default_factory=list)
    opened_at: dict[str, float] = field(default_factory=dict)
    final: ReviewDecided | None = None
    _reviewers: set[str] = field(default_factory=set)

    @property
    def review_id(self) -> str:
        return self.request.review_id

    @property
    def status(self) -> Status:
        return "waiting" if self.final is None else self.final.decision

    def reviewers(self) -> set[str]:
        return self._reviewers

    def add(self, opinion: ReviewDecided) -> None:
        self.opinions.append(opinion)
        self._reviewers.add(opinion.reviewer)
        if opinion.final and self.final is None:
            self.final = opinion


def next_decision(item: Item, reviewer: str, decision: str, reason: str,
                  approved_ids: Iterable[str] = (), blocked: str | None = None) -> ReviewDecided:
    """The (unsigned) decision `reviewer` makes on `item`, or DecisionRefused.

    One opinion per reviewer; the item's author may not decide it; a rejection needs a
    reason. A double review takes two opinions: if they agree the second is final, if they
    differ a third reviewer's opinion is final. Every opinion keeps its reviewer's own label,
    so agreement (Cohen's kappa, Krippendorff's alpha) can be computed from the events alone.
    `blocked` (ReviewQueue.admission_block) says why the item's family may not be admitted on
    one opinion now: an approval then needs the item to be double-reviewed.
    """
    request = item.request
    if item.final is not None:
        raise DecisionRefused(f"review {request.review_id} is already decided "
                              f"({item.final.decision} by {item.final.reviewer})")
    if request.submitted_by is not None and reviewer == request.submitted_by:
        raise DecisionRefused(f"{reviewer} wrote this item and may not decide it; another "
                              "reviewer must")
    if reviewer in item.reviewers():
        raise DecisionRefused(f"{reviewer} has already given an opinion on review "
                              f"{request.review_id}; a second reviewer must decide it")
    if decision not in ("approved", "rejected", "needs_changes"):
        raise DecisionRefused(f"decision must be approved, rejected or needs_changes, not "
                              f"{decision!r}")
    if decision != "approved" and not reason.strip():
        raise DecisionRefused("a rejection needs a reason: say what is wrong with the item")
    if blocked is not None and decision == "approved" and not request.double_review:
        raise DecisionRefused(blocked)
    approved = list(approved_ids)
    unknown = set(approved) - set(request.subject_ids)
    if unknown:
        raise DecisionRefused(f"approved ids {sorted(unknown)} are not part of review "
                              f"{request.review_id}")
    final = True
    if request.double_review:
        if len(item.opinions) == 0:
            final = False
        elif len(item.opinions) == 1:
            final = item.opinions[0].decision == decision
    return ReviewDecided(
        review_id=request.review_id, decision=decision, reviewer=reviewer,  # type: ignore[arg-type]
        reason=reason.strip(), approved_ids=approved, decision_id=uuid.uuid4().hex,
        submitted_by=request.submitted_by, final=final, source="gate/1",
        correlation_id=request.correlation_id, causation_id=request.event_id)


class ReviewQueue:
    """Review items and the trajectories, verdicts and failure traces they point at.

    Thread-safe: the consumer thread applies events while request handlers read (`lock`).
    """

    def __init__(self, max_unclaimed: int = MAX_UNCLAIMED_EPISODES,
                 trust: Callable[[ReviewDecided], bool] | None = None,
                 gold: Sequence[GoldItem] = ()) -> None:
        self.lock = threading.RLock()
        #: Gold items not yet in the queue (one joins after every GOLD_EVERY real requests), and
        #: the right answer of each one that joined (services.gate.gold).
        self._gold_pending = list(gold)
        self.gold: dict[str, str] = {}
        self._real_requests = 0
        #: Which decisions read from the topic count (the gate: its own valid signatures), so a
        #: forged decision on the topic cannot take an item out of the queue.
        self.trust = trust
        self.untrusted = 0
        self.items: dict[str, Item] = {}
        self._by_seq: list[Item] = []
        self._waiting: list[int] = []  # seqs of waiting items, ascending
        self._status: Counter[str] = Counter()
        self.episodes: OrderedDict[str, EpisodeEnded] = OrderedDict()
        self.verdicts: dict[str, VerdictIssued] = {}
        self.failures: dict[str, list[FailureTraced]] = defaultdict(list)
        self.tasks: OrderedDict[str, TaskInfo] = OrderedDict()
        self._claims: Counter[str] = Counter()  # episode id → waiting items that show it
        self._unclaimed: OrderedDict[str, None] = OrderedDict()  # kept, but no item waits on
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._decision_ids: set[str] = set()
        self.max_unclaimed = max_unclaimed
        self.applied = 0
        self.duplicates = 0
        self.version = 0  # bumped on every change

    # ---- the fold ---------------------------------------------------------------------
    def apply(self, event: Event) -> bool:
        """Folds `event` in; False when it was a duplicate (or a type the gate ignores)."""
        with self.lock:
            if event.event_id in self._seen:
                self.duplicates += 1
                return False
            self._remember(event.event_id)
            changed = self._apply(event)
            if changed:
                self.applied += 1
                self.version += 1
            return changed

    def _remember(self, event_id: str) -> None:
        self._seen[event_id] = None
        if len(self._seen) > MAX_SEEN_IDS:
            self._seen.popitem(last=False)

    def _apply(self, event: Event) -> bool:
        if isinstance(event, ReviewRequested):
            if event.review_id in self.items:
                return False
            self._add_item(event)
            self._status["waiting"] += 1
            self._real_requests += 1
            if self._gold_pending and self._real_requests % GOLD_EVERY == 0:
                self._release_gold(self._gold_pending.pop(0))
            return True
        if isinstance(event, ReviewDecided):
            return self._record(event)
        if isinstance(event, EpisodeEnded):
            self.episodes[event.episode_id] = event
            if event.episode_id not in self._claims:
                self._unclaimed[event.episode_id] = None
                self._evict()
            return True
        if isinstance(event, VerdictIssued):
            self.verdicts[event.episode_id] = event
            return True
        if isinstance(event, FailureTraced):
            self.failures[event.episode_id].append(event)
            return True
        if isinstance(event, TaskProposed):
            tier = getattr(event, "tier", None)  # TaskProposed gains a tier with the suite
            self.tasks[event.task_id] = TaskInfo(event.goal, event.template, event.family,
                                                 None if tier is None else str(tier),
                                                 getattr(event, "instance", None))
            if len(self.tasks) > MAX_TASKS:
                self.tasks.popitem(last=False)
            return True
        return False

    def _add_item(self, request: ReviewRequested) -> Item:
        item = Item(request, len(self._by_seq))
        self.items[request.review_id] = item
        self._by_seq.append(item)
        self._waiting.append(item.seq)
        for episode_id in request.subject_ids:
            self._claims[episode_id] += 1
            self._unclaimed.pop(episode_id, None)
        return item

    def _release_gold(self, gold: GoldItem) -> None:
        """A gold item joins the queue like a real one, outside the status counts."""
        for event in gold.sample.events:
            if isinstance(event, ReviewRequested):
                self._add_item(event)
                self.gold[event.review_id] = gold.answer
            elif event.event_id not in self._seen:
                self._remember(event.event_id)
                self._apply(event)

    def _record(self, decision: ReviewDecided) -> bool:
        item = self.items.get(decision.review_id)
        if item is None or decision.decision_id is None:
            return False  # not ours to show (unknown review, or an unsigned decision)
        if decision.decision_id in self._decision_ids:
            return False
        if (self.trust is not None and not self.trust(decision)) or \
                decision.reviewer == item.request.submitted_by:
            self.untrusted += 1
            logger.warning("ignoring decision %s on %s: not signed by this gate's key, or by "
                           "the item's author", decision.decision_id, decision.review_id)
            return False
        self._decision_ids.add(decision.decision_id)
        was = item.status
        item.add(decision)
        if item.status != was:
            if item.review_id not in self.gold:  # gold items stay out of the counts
                self._status[was] -= 1
                self._status[item.status] += 1
            at = bisect.bisect_left(self._waiting, item.seq)
            if at < len(self._waiting) and self._waiting[at] == item.seq:
                del self._waiting[at]
            self._release(item.request.subject_ids)
        return True

    def _release(self, episode_ids: Iterable[str]) -> None:
        """A decided item no longer holds its trajectories: they may be evicted now."""
        for episode_id in episode_ids:
            self._claims[episode_id] -= 1
            if self._claims[episode_id] <= 0:
                del self._claims[episode_id]
                if episode_id in self.episodes:
                    self._unclaimed[episode_id] = None
        self._evict()

    def _evict(self) -> None:
        """Drops the oldest trajectories no waiting item shows, beyond `max_unclaimed`."""
        while len(self._unclaimed) > self.max_unclaimed:
            episode_id, _ = self._unclaimed.popitem(last=False)
            self.episodes.pop(episode_id, None)
            self.verdicts.pop(episode_id, None)
            self.failures.pop(episode_id, None)

    # ---- reads ------------------------------------------------------------------------
    def info(self, item: Item) -> TaskInfo | None:
        request = item.request
        task_id = request.task_id or next(
            (e.task_id for i in request.subject_ids if (e := self.episodes.get(i))), None)
        return self.tasks.get(task_id) if task_id else None

    def family(self, item: Item) -> str | None:
        if item.request.family:
            return item.request.family
        info = self.info(item)
        return info.family if info else None

    def tier(self, item: Item) -> str | None:
        if item.request.tier is not None:
            return item.request.tier
        info = self.info(item)
        return info.tier if info else None

    def verdict(self, item: Item) -> Verdict:
        verdicts = [self.verdicts.get(i) for i in item.request.subject_ids]
        if any(v is None for v in verdicts):
            return "pending"
        scores = [v.score for v in verdicts if v is not None]
        if all(s == 1.0 for s in scores):
            return "passed"
        return "failed" if all(s == 0.0 for s in scores) else "partial"

    def categories(self, item: Item) -> set[str]:
        return {f.category for i in item.request.subject_ids for f in self.failures.get(i, ())}

    def select(self, *, reviewer: str | None = None, status: str = "waiting",
               family: str | None = None, tier: str | None = None, verdict: str | None = None,
               category: str | None = None) -> list[Item]:
        """Items matching the filters, oldest first; with `reviewer`, waiting items that
        reviewer may still decide (not theirs, no opinion given yet)."""
        with self.lock:
            out = []
            pool = ([self._by_seq[seq] for seq in self._waiting] if status == "waiting"
                    else self.items.values())
            for item in pool:
                if status != "all" and item.status != status:
                    continue
                if reviewer is not None and status == "waiting" and (
                        reviewer in item.reviewers() or reviewer == item.request.submitted_by):
                    continue
                if family and self.family(item) != family:
                    continue
                if tier is not None and self.tier(item) != tier:
                    continue
                if verdict and self.verdict(item) != verdict:
                    continue
                if category and category not in self.categories(item):
                    continue
                out.append(item)
            return out

    def may_decide(self, item: Item, reviewer: str) -> bool:
        return (item.final is None and reviewer not in item.reviewers()
                and reviewer != item.request.submitted_by)

    def next_waiting(self, reviewer: str, after: str | None = None) -> Item | None:
        """The next waiting item `reviewer` may decide: the first *uncertain* one (URGENT_REASONS:
        verifier and policy disagree, a partial score near the checker's threshold, an unverified
        checker) after `after` in queue order, wrapping round, else the first other one; None
        when there is none. People see what only people can settle first."""
        with self.lock:
            start = 0
            if after is not None and after in self.items:
                start = bisect.bisect_right(self._waiting, self.items[after].seq)
            waiting = self._waiting
            first: Item | None = None
            for seq in (*waiting[start:], *waiting[:start]):
                item = self._by_seq[seq]
                if not self.may_decide(item, reviewer):
                    continue
                if URGENT_REASONS.intersection(item.request.reasons):
                    return item
                first = first or item
            return first

    def counts(self) -> dict[str, int]:
        """Items per status, requests and opinions (kept as running counts: O(1))."""
        with self.lock:
            out = {s: self._status[s] for s in ("waiting", "approved", "rejected",
                                                "needs_changes")}
            out["requested"] = len(self.items) - len(self.gold)
            out["opinions"] = len(self._decision_ids)
            return out

    def opinions(self) -> list[Opinion]:
        with self.lock:
            out = []
            for item in self.items.values():
                for o in item.opinions:
                    opened = item.opened_at.get(o.reviewer)
                    decided = o.occurred_at.timestamp()
                    out.append(Opinion(item.review_id, o.reviewer, o.decision, decided,
                                       None if opened is None else max(decided - opened, 0.0)))
            return out

    def kappa(self) -> tuple[float | None, int]:
        """Cohen's kappa over the first two opinions of double-reviewed items, and the pairs."""
        with self.lock:
            pairs = [(i.opinions[0].decision, i.opinions[1].decision)
                     for i in self.items.values()
                     if i.request.double_review and len(i.opinions) >= 2]
        return cohens_kappa(pairs), len(pairs)

    def alpha_by_family(self, family: str | None = None) -> dict[str, tuple[float | None, int]]:
        """Krippendorff's alpha per family (or of `family` only) over the opinions on its
        double-reviewed items (those with two or more), and how many such items there are."""
        with self.lock:
            units: dict[str, list[list[str]]] = defaultdict(list)
            for item in self.items.values():
                if item.request.double_review and len(item.opinions) >= 2:
                    mine = self.family(item) or "unknown"
                    if family is None or mine == family:
                        units[mine].append([o.decision for o in item.opinions])
        return {family: (krippendorff_alpha(labels), len(labels)) for family, labels in sorted(units.items())}

    def admission_block(self, item: Item) -> str | None:
        """Why `item`'s family may not be admitted on a single opinion now (its alpha, measured
        over enough double reviews, is below MIN_ALPHA), or None."""
        family = self.family(item) or "unknown"
        alpha, items = self.alpha_by_family(family).get(family, (None, 0))
        if alpha is None or items < MIN_ALPHA_ITEMS or alpha >= MIN_ALPHA:
            return None
        return (f"admission of family {family} is blocked: its reviewers agree too little "
                f"(Krippendorff's alpha {alpha:.2f} over {items} double reviews, below {MIN_ALPHA}); "
                "only double-reviewed items of it may be approved until they agree again")

    def gold_scores(self) -> dict[str, tuple[int, int]]:
        """Per reviewer: (right answers, decisions) on gold items; `needs_changes` counts as not
        approving."""
        with self.lock:
            scores: dict[str, list[int]] = defaultdict(lambda: [0, 0])
            for review_id, answer in self.gold.items():
                for opinion in self.items[review_id].opinions:
                    said = "approved" if opinion.decision == "approved" else "rejected"
                    scores[opinion.reviewer][0] += said == answer
                    scores[opinion.reviewer][1] += 1
        return {reviewer: (right, total) for reviewer, (right, total) in sorted(scores.items())}

    def throughput(self) -> list[ReviewerThroughput]:
        gold = self.gold_scores()
        return [r.model_copy(update={"gold_decided": gold.get(r.reviewer, (0, 0))[1],
                                     "gold_correct": gold.get(r.reviewer, (0, 0))[0]})
                for r in throughput(self.opinions())]
