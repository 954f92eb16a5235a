"""The verifier as a folding service: tasks and episodes in, verdicts and failures out."""

from __future__ import annotations

import logging
from pathlib import Path

from devices.blobs import BlobStore
from devices.suite.registry import all_templates
from schemas.envelope import Event
from schemas.topics import TOPICS, Topic
from services.dataflow.store import Stored
from services.dataflow.tasks import new_harness
from services.verifier.decide import VerifierState, World, decide, evolve

__all__ = ["VerifierService"]

logger = logging.getLogger(__name__)


class VerifierService:
    name = "verifier"
    apply_outputs = False

    def __init__(self, blob_root: Path, *, suite_seed: int = 0,
                 topics: dict[str, Topic] | None = None) -> None:
        self.topics = {**TOPICS, **(topics or {})}
        self.inputs = (self.topics["flywheel.tasks"], self.topics["flywheel.episodes"])
        self.world = World(BlobStore(blob_root), new_harness("verifier-reference"), suite_seed)
        self.state = VerifierState()

    def warm_up(self) -> None:
        """Imports every template (the checkers) before the first episode needs one."""
        all_templates()

    def apply(self, stored: Stored) -> None:
        self.state = evolve(self.state, stored.event)

    def handle(self, stored: Stored) -> list[tuple[Topic, Event]]:
        out = decide(self.state, stored.event, self.world)
        return [(self.topics["flywheel.verdicts"] if e.type == "verdict.issued"
                 else self.topics["flywheel.failures"], e) for e in out]

    def tick(self) -> list[tuple[Topic, Event]]:
        return []
