"""The thin I/O shell around a folding service: skip what is stored, decide, send, flush,
store, evolve. Used by the faust agents (`services.dataflow.agent`) and by in-process
drivers (tests, bench) alike.

Order matters for exactly-once effects on an at-least-once bus: outputs are sent and
acknowledged *before* the inputs are stored, so a crash in between re-decides those inputs
after restart, which yields the same output ids (derived from the inputs), which every sink
drops as duplicates. An input already stored is skipped.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Protocol

from schemas.envelope import Event
from schemas.topics import Topic
from services.dataflow.store import EventStore, Stored
from streams.producer import TypedProducer

__all__ = ["FoldingService", "Runner"]

logger = logging.getLogger(__name__)

#: After flush every future is resolved; this only guards against a broken client.
SEND_TIMEOUT_S = 30.0


class FoldingService(Protocol):
    """A service's domain behind the runner."""

    name: str
    #: Topics the service reads; its own outputs come back through them when listed here.
    inputs: tuple[Topic, ...]
    #: Fold own outputs at once (they are not read back), e.g. the generator's tasks.
    apply_outputs: bool

    def apply(self, stored: Stored) -> None:
        """evolve: fold one event into the in-memory state."""
        ...

    def handle(self, stored: Stored) -> list[tuple[Topic, Event]]:
        """decide (plus idempotent file effects): the events `stored` causes."""
        ...

    def tick(self) -> list[tuple[Topic, Event]]:
        """decide on a timer (top-ups, timeouts); [] when nothing is due."""
        ...

    # Optional: `warm_up()`, called once before the store is replayed (see Runner.restore).


class Runner:
    """Runs one FoldingService: restore from the store, then process batches."""

    def __init__(self, service: FoldingService, store: EventStore, producer: TypedProducer) -> None:
        self.service = service
        self.store = store
        self.producer = producer
        self.processed = 0
        self.skipped = 0
        self.sent = 0
        self._lock = threading.Lock()  # the faust timer and agent may call in together

    def restore(self) -> int:
        """Warms the service up (its `warm_up`, when it has one: one-time costs such as imports
        and compiled patterns belong to the start, not to the first event), then folds every
        stored event; returns how many."""
        warm_up = getattr(self.service, "warm_up", None)
        if warm_up is not None:
            warm_up()
        count = 0
        for stored in self.store.load():
            self.service.apply(stored)
            count += 1
        logger.info("%s restored %d events from %s", self.service.name, count, self.store.path)
        return count

    def process(self, items: Sequence[Stored],
                on_failure: Callable[[Stored, Exception], None] | None = None) -> int:
        """Decides, sends, stores and folds a batch; returns the events sent.

        An input whose decide (`handle`) raises is handed to `on_failure` (the agent
        dead-letters it) and neither folded nor stored; decide changes no state, so the rest
        of the batch goes on. Without `on_failure`, or when a fold (`apply`) raises, the
        error propagates: the state in memory may then be half-folded."""
        with self._lock:
            inputs: list[Stored] = []
            outputs: list[tuple[Topic, Event]] = []
            seen: set[str] = set()
            for item in items:
                event_id = item.event.event_id
                if event_id in self.store or event_id in seen:
                    self.skipped += 1
                    continue
                seen.add(event_id)
                try:
                    produced = self.service.handle(item)
                except Exception as error:
                    if on_failure is None:
                        raise
                    on_failure(item, error)
                    continue
                self.service.apply(item)
                if self.service.apply_outputs:
                    for topic, event in produced:
                        self.service.apply(Stored(event, topic.name))
                inputs.append(item)
                outputs.extend(produced)
            return self._commit(inputs, outputs)

    def tick(self) -> int:
        with self._lock:
            produced = self.service.tick()
            if self.service.apply_outputs:
                for topic, event in produced:
                    self.service.apply(Stored(event, topic.name))
            return self._commit([], produced)

    def _commit(self, inputs: list[Stored], outputs: list[tuple[Topic, Event]]) -> int:
        futures = [(topic, event, self.producer.send(topic, event)) for topic, event in outputs]
        if futures:
            self.producer.flush()
        own = []
        for topic, event, future in futures:
            meta = future.get(timeout=SEND_TIMEOUT_S)  # raises when a send failed: no store
            if self.service.apply_outputs:
                own.append(Stored(event, topic.name, meta.partition, meta.offset))
        self.store.append([*inputs, *own])
        self.processed += len(inputs)
        self.sent += len(futures)
        return len(futures)
