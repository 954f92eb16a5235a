"""A folding service that fails on any task event whose goal says "crash", run as a faust
worker by `serve` (the agent test starts it as its own process)."""

from __future__ import annotations

import logging

from schemas.envelope import Event
from schemas.topics import TOPICS, Topic
from services.dataflow.agent import serve
from services.dataflow.store import Stored


class CrashingService:
    name = "crashing"
    inputs = (TOPICS["flywheel.tasks"],)
    apply_outputs = False

    def __init__(self) -> None:
        self.folded = 0

    def apply(self, stored: Stored) -> None:
        self.folded += 1

    def handle(self, stored: Stored) -> list[tuple[Topic, Event]]:
        if "crash" in getattr(stored.event, "goal", ""):
            raise KeyError("a bug in the service")
        return []

    def tick(self) -> list[tuple[Topic, Event]]:
        return []


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s crashing %(message)s")
    serve(lambda bus, bootstrap: CrashingService(), "crashing")
