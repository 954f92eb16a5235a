"""Every event type by name, the upcasters for old versions, and validation with clear errors."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable
from typing import Any

from pydantic import ValidationError

from schemas.envelope import Event
from schemas.episodes import upcast_episode_ended_v1, upcast_observation_v1
from schemas.topics import TOPICS
from schemas.verdicts import upcast_verdict_v1

__all__ = [
    "EVENT_TYPES",
    "UPCASTERS",
    "FutureSchemaVersion",
    "InvalidEvent",
    "SchemaError",
    "TypeNotAllowed",
    "UnknownEventType",
    "checked_envelope",
    "describe_validation_error",
    "upcast",
    "validate_event",
]

logger = logging.getLogger(__name__)

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]

#: Every event type of the contract: the union of the topics' unions (each type is carried
#: by exactly one topic, so the topic registry is the one list of models).
EVENT_TYPES: dict[str, type[Event]] = {
    name: model for t in TOPICS.values() for name, model in t.models.items()
}

#: (type, from_version) → function returning the payload at from_version + 1.
UPCASTERS: dict[tuple[str, int], Upcaster] = {
    ("verdict.issued", 1): upcast_verdict_v1,
    ("observation.recorded", 1): upcast_observation_v1,
    ("episode.ended", 1): upcast_episode_ended_v1,
}


class SchemaError(ValueError):
    """Bytes or a dict that are not a valid event of the contract; `path` names the bad field."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class UnknownEventType(SchemaError):
    pass


class TypeNotAllowed(SchemaError):
    pass


class FutureSchemaVersion(SchemaError):
    pass


class InvalidEvent(SchemaError):
    pass


def _path(loc: Iterable[Any]) -> str:
    return ".".join(str(part) for part in loc) or "<root>"


def describe_validation_error(error: ValidationError, type_name: str) -> InvalidEvent:
    """One sentence naming the first bad field path, e.g. `steps.0.action.index: ...`."""
    first = error.errors()[0]
    path = _path(first["loc"])
    more = error.error_count() - 1
    tail = f" (and {more} more error{'s' if more > 1 else ''})" if more else ""
    return InvalidEvent(f"invalid {type_name} event: field '{path}': {first['msg']}{tail}", path)


def upcast(data: dict[str, Any]) -> dict[str, Any]:
    """Brings an event payload of an older schema_version up to its type's current version."""
    type_name = data.get("type")
    model = EVENT_TYPES.get(type_name) if isinstance(type_name, str) else None
    if model is None:
        raise UnknownEventType(f"unknown event type {type_name!r}", "type")
    version = data.get("schema_version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InvalidEvent(f"invalid {type_name} event: field 'schema_version' must be a "
                           f"positive integer, got {version!r}", "schema_version")
    if version > model.current_version:
        raise FutureSchemaVersion(
            f"{type_name} schema_version {version} is newer than this reader understands "
            f"({model.current_version}); upgrade the consumer", "schema_version")
    while version < model.current_version:
        step = UPCASTERS.get((type_name, version))
        if step is None:
            raise SchemaError(f"no upcaster for {type_name} v{version} -> v{version + 1}",
                              "schema_version")
        data = step(data)
        version += 1
        data["schema_version"] = version
    return data


def checked_envelope(data: dict[str, Any], allowed: Collection[str] | None = None) -> type[Event]:
    """The model of an already upcast payload (`upcast` checked its type and version), after the
    checks that precede field validation: the envelope fields a reader must find in the payload
    itself (their defaults are for constructing events, never for reading them) and a type the
    topic carries."""
    type_name = data["type"]
    for field in ("event_id", "occurred_at"):  # the wire decoder also requires schema_version
        if field not in data:
            raise InvalidEvent(f"invalid {type_name} event: field '{field}': Field required", field)
    if allowed is not None and type_name not in allowed:
        raise TypeNotAllowed(f"event type {type_name!r} is not carried by this topic", "type")
    return EVENT_TYPES[type_name]


def validate_event(data: Any, allowed: Collection[str] | None = None) -> Event:
    """Validates a decoded payload into its event model, upcasting older versions first.

    `allowed` restricts the types (a topic's union); a type outside it is an error. This is the
    lenient Python-object path for payloads already checked once (a service's own store); bytes
    from the wire go through `streams.codec.decode`, which is strict.
    """
    if isinstance(data, Event):
        data = data.model_dump(mode="json")
    if not isinstance(data, dict):
        raise InvalidEvent(f"an event must be a JSON object, got {type(data).__name__}")
    data = upcast(data)
    try:
        return checked_envelope(data, allowed).model_validate(data)
    except ValidationError as error:
        raise describe_validation_error(error, data["type"]) from None
