"""Traffic for chaos tests, with the independent count: a log of what the broker acknowledged."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from schemas.envelope import Event
from schemas.topics import Topic
from streams.producer import TypedProducer

__all__ = ["Traffic"]

#: Events per second: enough to keep every flush window busy, little enough for 2 cores.
DEFAULT_RATE = 400


class Traffic:
    """Sends `make(i)` for i = 0, 1, … to `topic` from a thread at about `rate` per second and
    logs each event id the broker acknowledged, with when (time.monotonic)."""

    def __init__(self, bootstrap: str, topic: Topic, make: Callable[[int], Event], *,
                 rate: int = DEFAULT_RATE, limit: int | None = None) -> None:
        self.bootstrap, self.topic, self.make = bootstrap, topic, make
        self.rate, self.limit = rate, limit
        self.acked: dict[str, float] = {}
        self.events: dict[str, Event] = {}
        self.failed = 0
        self.error: BaseException | None = None  # why sending stopped early (a dead broker)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._send, daemon=True, name="chaos-traffic")
        self.done = threading.Event()

    def _send(self) -> None:
        producer = TypedProducer(self.bootstrap, client_id="chaos-traffic", linger_ms=2)
        try:
            i = 0
            started = time.monotonic()
            while not self._stop.is_set() and (self.limit is None or i < self.limit):
                event = self.make(i)
                self.events[event.event_id] = event
                future = producer.send(self.topic, event)
                future.add_callback(self._ack, event.event_id)
                future.add_errback(self._fail)
                i += 1
                ahead = i / self.rate - (time.monotonic() - started)
                if ahead > 0:
                    time.sleep(ahead)
            producer.flush(timeout_s=10)
        except Exception as error:  # noqa: BLE001 - a dead broker: what was acked is what counts
            self.error = error
        finally:
            try:
                producer.close(timeout_s=2)
            except Exception as error:  # noqa: BLE001 - same
                self.error = error
            self.done.set()

    def _ack(self, event_id: str, _metadata: object) -> None:
        with self._lock:
            self.acked[event_id] = time.monotonic()

    def _fail(self, _error: BaseException) -> None:
        with self._lock:
            self.failed += 1

    def start(self) -> Traffic:
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 30.0) -> None:
        self._stop.set()
        self._thread.join(timeout_s)

    def acked_ids(self) -> set[str]:
        with self._lock:
            return set(self.acked)
