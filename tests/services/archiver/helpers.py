"""Shared builders for archiver tests: task events and plain records shaped like the consumer's."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from schemas.envelope import Event
from schemas.tasks import TaskProposed
from streams.codec import encode, headers_for

__all__ = ["Rec", "record_of", "task"]


@dataclass(frozen=True)
class Rec:
    """A consumed record, with the fields streams.consumer.Record has."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes]] = field(default_factory=list)
    timestamp_ms: int = 1_700_000_000_000
    event: Event | None = None


def task(i: int, day: int = 1, pad: int = 0) -> TaskProposed:
    """Task event number `i`, occurring on 2024-05-<day> (goal padded by `pad` characters)."""
    return TaskProposed(
        event_id=f"ev{i:08d}", task_id=f"task-{i}", template="send_message", family="tool",
        split="train", index=i, goal="Send a message " + "x" * pad, source="test/0.1",
        correlation_id=f"run-{i % 3}", occurred_at=datetime(2024, 5, day, 12, tzinfo=UTC),
    )


def record_of(event: Event, topic: str = "flywheel.tasks", partition: int = 0,
              offset: int = 0) -> Rec:
    return Rec(topic, partition, offset, getattr(event, "task_id", "k").encode(), encode(event),
               headers_for(event), event=event)
