"""The envelope every event carries, and the base model all events share."""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import cache
from typing import Any, ClassVar, Self, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["Event", "Frozen", "is_validated", "new_event_id", "utc_now"]

#: Key in a value's pydantic private dict marking it as built without validation. A mark on
#: the unvalidated few, not a PrivateAttr flag on all: declaring a PrivateAttr makes pydantic
#: call a Python post-init on every instance it validates (measured: decode of a 50-step
#: episode 2.6x slower); without one, validated instances keep `__pydantic_private__` None.
_UNVALIDATED = "_unvalidated"


def new_event_id() -> str:
    """A fresh, globally unique event id (32 hex characters)."""
    return uuid.uuid4().hex


#: RFC 3339 date-time (section 5.6) with its zone, as JSON Schema's `date-time` format reads it.
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})")


def utc_now() -> datetime:
    """The current time as an aware UTC datetime."""
    return datetime.now(UTC)


def _may_hold_models(annotation: Any) -> bool:
    """True when a field of this annotation can hold a pydantic model (directly or inside)."""
    if annotation is Any or (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return True
    return any(_may_hold_models(arg) for arg in get_args(annotation))


@cache
def _nesting_fields(model: type[Frozen]) -> tuple[str, ...]:
    """The fields of `model` that can hold value objects (TaskProposed has none)."""
    return tuple(name for name, info in model.model_fields.items()
                 if _may_hold_models(info.annotation))


def _all_validated(value: Any) -> bool:
    if isinstance(value, Frozen):
        return is_validated(value)
    if isinstance(value, (list, tuple, set, frozenset)):
        return all(_all_validated(item) for item in value)
    if isinstance(value, dict):
        return all(_all_validated(item) for item in value.values())
    return True


def _mark_unvalidated(model: Frozen) -> None:
    private = model.__pydantic_private__
    if private is None:
        object.__setattr__(model, "__pydantic_private__", {_UNVALIDATED: True})
    else:
        private[_UNVALIDATED] = True


class Frozen(BaseModel):
    """Base for every value object in the contract: immutable, unknown fields rejected.

    `is_validated` tells whether validation built a value, children included:
    `model_construct` and `model_copy(update=...)` skip validation and mark the value,
    so the producer re-validates exactly those.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    @classmethod
    def model_construct(cls, _fields_set: set[str] | None = None, **values: Any) -> Self:
        """An instance built without validation (trusted or deliberately bad data)."""
        model = super().model_construct(_fields_set, **values)
        _mark_unvalidated(model)
        return model

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy; with `update` the new values are not validated, so neither is the copy."""
        copy = super().model_copy(update=update, deep=deep)
        if update:
            _mark_unvalidated(copy)
        return copy

    def __eq__(self, other: object) -> bool:
        # Equal field values are equal values however they were built (pydantic's own __eq__
        # also compares the private dict, where the mark lives).
        if isinstance(other, Frozen):
            return type(self) is type(other) and self.__dict__ == other.__dict__
        return NotImplemented


def is_validated(model: Frozen) -> bool:
    """True when validation built `model` and every value object inside it, False when any
    came from model_construct or model_copy(update=...). Lists and dicts inside a frozen
    model can still be mutated in place: values put there by hand are checked only for the
    mark, not re-validated."""
    private = model.__pydantic_private__
    if private is not None and _UNVALIDATED in private:
        return False
    values = model.__dict__
    return all(_all_validated(values[name]) for name in _nesting_fields(type(model)))


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

    @field_validator("occurred_at", mode="before")
    @classmethod
    def _must_be_rfc3339(cls, value: object) -> object:
        # Pydantic would also read "8" or 8 as seconds since 1970; the contract is RFC 3339 text.
        if isinstance(value, datetime):
            return value
        if not isinstance(value, str) or not _RFC3339.fullmatch(value):
            raise ValueError("occurred_at must be an RFC 3339 date-time with a zone, e.g. 2026-12-01T08:00:00Z")
        return datetime.fromisoformat(value)  # parsed here: strict mode takes no text after a before-validator

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
