"""A folding service with bugs, run as a faust worker by `serve` (the agent test starts it
as its own process): its decide fails on a task whose goal says "decide", its fold on one
whose goal says "fold"."""

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
        if "fold" in getattr(stored.event, "goal", ""):
            raise RuntimeError("a bug in the fold")
        self.folded += 1

    def handle(self, stored: Stored) -> list[tuple[Topic, Event]]:
        if "decide" in getattr(stored.event, "goal", ""):
            raise KeyError("a bug in decide")
        return []

    def tick(self) -> list[tuple[Topic, Event]]:
        return []


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s crashing %(message)s")
    serve(lambda bus, bootstrap: CrashingService(), "crashing")
