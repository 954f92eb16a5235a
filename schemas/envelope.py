"""The envelope every event carries, and the base model all events share."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["Event", "Frozen", "new_event_id", "utc_now"]


def new_event_id() -> str:
    """A fresh, globally unique event id (32 hex characters)."""
    return uuid.uuid4().hex


def utc_now() -> datetime:
    """The current time as an aware UTC datetime."""
    return datetime.now(UTC)


class Frozen(BaseModel):
    """Base for every value object in the contract: immutable, unknown fields rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Event(Frozen):
    """Envelope fields shared by every event; subclasses add a `type` literal and a payload.

    `correlation_id` ties an event to the run or episode it belongs to, and
    `causation_id` names the event that caused it (None for a root cause).
    """

    #: The newest schema version of this event type; bumped together with an upcaster.
    current_version: ClassVar[int] = 1

    event_id: str = Field(default_factory=new_event_id, min_length=1, max_length=64,
                          description="Unique id; every sink dedupes on it.")
    type: str = Field(description="Dotted past-tense event name, e.g. 'episode.ended'.")
    schema_version: int = Field(default=1, ge=1, description="Version of this type's payload.")
    occurred_at: datetime = Field(default_factory=utc_now, description="When it happened (UTC).")
    source: str = Field(min_length=1, description="Producing service and version, 'name/1.2.3'.")
    correlation_id: str = Field(min_length=1, description="The run or episode it belongs to.")
    causation_id: str | None = Field(default=None, description="The event that caused this one.")

    @field_validator("schema_version")
    @classmethod
    def _must_be_current(cls, value: int) -> int:
        # Older payloads are upcast before validation (schemas.registry), so a model
        # instance always holds its type's current version.
        if value != cls.current_version:
            raise ValueError(f"schema_version must be {cls.current_version} for this model; "
                             "read older payloads through schemas.registry.validate_event")
        return value

    @field_validator("occurred_at")
    @classmethod
    def _must_be_utc(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("occurred_at must carry a timezone (UTC)")
        return value.astimezone(UTC)

    @classmethod
    def event_type(cls) -> str:
        """The literal value of this model's `type` field."""
        return cls.model_fields["type"].default

    def caused(self) -> dict[str, str]:
        """Envelope fields for an event caused by this one (same correlation, causation = self)."""
        return {"correlation_id": self.correlation_id, "causation_id": self.event_id}
