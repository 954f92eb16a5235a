"""The contract of the whole loop: event models, actions, observations, topics, upcasters."""

from __future__ import annotations

from schemas.actions import Action, parse_action
from schemas.envelope import Event, Frozen, new_event_id, utc_now
from schemas.observations import BlobRef, Bounds, Observation, ToolError, ToolResult, UIElement
from schemas.registry import (
    EVENT_TYPES,
    FutureSchemaVersion,
    InvalidEvent,
    SchemaError,
    TypeNotAllowed,
    UnknownEventType,
    upcast,
    validate_event,
)
from schemas.topics import TOPICS, Topic, dlq_name, topic

__all__ = [
    "EVENT_TYPES",
    "TOPICS",
    "Action",
    "BlobRef",
    "Bounds",
    "Event",
    "Frozen",
    "FutureSchemaVersion",
    "InvalidEvent",
    "Observation",
    "SchemaError",
    "ToolError",
    "ToolResult",
    "Topic",
    "TypeNotAllowed",
    "UIElement",
    "UnknownEventType",
    "dlq_name",
    "new_event_id",
    "parse_action",
    "topic",
    "upcast",
    "utc_now",
    "validate_event",
]
