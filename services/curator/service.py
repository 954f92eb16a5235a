"""The curator as a folding service: tasks, episodes, verdicts, failures, reviews, mix and
datasets in; review requests (and the stand-in's decisions) and snapshots out."""

from __future__ import annotations

import logging
from pathlib import Path

from devices.blobs import BlobStore
from schemas.envelope import Event
from schemas.reviews import ReviewRequested
from schemas.topics import TOPICS, Topic
from services.curator.corrections import DEFAULT_SHARE
from services.curator.decide import CuratorState, evolve, requests_between
from services.curator.snapshot import snapshot_rows_ready, write_snapshot
from services.dataflow.admission import AdmissionPolicy, AutoAdmission, OncePerEvent
from services.dataflow.heldout import held_out_mentions
from services.dataflow.store import Stored
from services.dataflow.tasks import new_harness

__all__ = ["CuratorService"]

logger = logging.getLogger(__name__)


class CuratorService:
    name = "curator"
    apply_outputs = False  # its reviews and snapshots come back through its inputs

    def __init__(self, snapshot_dir: Path, blob_root: Path, *, snapshot_examples: int = 500,
                 policy: AdmissionPolicy | None = None,
                 topics: dict[str, Topic] | None = None,
                 correction_share: float = DEFAULT_SHARE) -> None:
        self.topics = {**TOPICS, **(topics or {})}
        self.inputs = tuple(self.topics[name] for name in (
            "flywheel.tasks", "flywheel.episodes", "flywheel.verdicts", "flywheel.failures",
            "flywheel.reviews", "flywheel.mix", "flywheel.datasets"))
        self.snapshot_dir = snapshot_dir
        self.blobs = BlobStore(blob_root)
        self.snapshot_examples = snapshot_examples
        if not 0.0 <= correction_share < 1.0:
            raise ValueError(f"the corrections share must be at least 0 and below 1, got "
                             f"{correction_share}; set FLYWHEEL_CURATOR_CORRECTION_SHARE so")
        #: Share of each snapshot's rows that are corrections of failures (at most).
        self.correction_share = correction_share
        self.policy = OncePerEvent(policy or AutoAdmission())
        self.state = CuratorState()
        self.harness = new_harness("curator-replay")
        self._written: set[int] = set()  # snapshot numbers sent, not yet read back
        #: (the event handle() folded, the state it folded it into, the result)
        self._handled: tuple[Stored, CuratorState, CuratorState] | None = None

    def warm_up(self) -> None:
        """Compiles the held-out patterns (importing every template on the way) before the first
        episode is judged."""
        held_out_mentions("")

    def apply(self, stored: Stored) -> None:
        if isinstance(stored.event, ReviewRequested):
            # A stateful policy (the gate's) learns of every request, on restart too.
            self.policy.decide_request(stored.event)
        handled, self._handled = self._handled, None
        if handled is not None and handled[0] is stored and handled[1] is self.state:
            self.state = handled[2]  # folded once, in handle
        else:
            self.state = evolve(self.state, stored, self.policy)

    def handle(self, stored: Stored) -> list[tuple[Topic, Event]]:
        after = evolve(self.state, stored, self.policy)
        self._handled = (stored, self.state, after)  # apply(stored) takes it
        out: list[tuple[Topic, Event]] = [
            (self.topics["flywheel.reviews"], e)
            for e in requests_between(self.state, after, self.policy)]
        number = len(after.snapshots) + 1
        ready = snapshot_rows_ready(after, self.correction_share)
        if ready >= self.snapshot_examples * number and number not in self._written:
            target = self.snapshot_examples * number
            event = write_snapshot(after, target, self.snapshot_dir, self.blobs,
                                   self.policy.name, cause=stored.event.event_id,
                                   harness=self.harness,
                                   correction_share=self.correction_share)
            logger.info("snapshot %s: %d rows at %s", event.snapshot_id, event.rows, event.path)
            self._written.add(number)
            out.append((self.topics["flywheel.datasets"], event))
        return out

    def tick(self) -> list[tuple[Topic, Event]]:
        return []
