"""Shared set-up for the gate's broker tests: fresh topics, publishing samples, draining."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from schemas.envelope import Event
from schemas.topics import Topic
from services.gate.service import FEED_TOPICS, GateFeed, GateTopics
from streams.producer import TypedProducer

__all__ = ["DEADLINE_S", "fresh_gate_topics", "publish", "wait_for"]

#: A safety net against hangs on a real broker, not a speed assertion.
DEADLINE_S = 60.0


def fresh_gate_topics(fresh_topic: Callable[[str], Topic]) -> GateTopics:
    return GateTopics(*(fresh_topic(name) for name in FEED_TOPICS))


def publish(bootstrap: str, topics: GateTopics, events: Iterable[Event]) -> None:
    by_type = {name: t for t in topics.all() for name in t.type_names}
    with TypedProducer(bootstrap) as producer:
        for event in events:
            producer.send(by_type[event.type], event)
        producer.flush()


def wait_for(condition: Callable[[], bool], feed: GateFeed | None = None,
             what: str = "the condition") -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        if feed is not None:
            feed.poll_once()
        else:
            time.sleep(0.05)
