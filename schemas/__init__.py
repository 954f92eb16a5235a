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
    "Action", "parse_action", "Event", "Frozen", "new_event_id", "utc_now", "BlobRef", "Bounds",
    "Observation", "ToolError", "ToolResult", "UIElement", "EVENT_TYPES", "FutureSchemaVersion",
    "InvalidEvent", "SchemaError", "TypeNotAllowed", "UnknownEventType", "upcast",
    "validate_event", "TOPICS", "Topic", "dlq_name", "topic",
]
