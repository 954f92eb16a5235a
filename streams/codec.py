"""Event <-> bytes: compact UTF-8 JSON values, envelope headers, and validating decode."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from pydantic import ValidationError

from schemas.envelope import Event
from schemas.registry import EVENT_TYPES, InvalidEvent, SchemaError, upcast, validate_event
from schemas.topics import Topic
from streams.settings import DEFAULT_MAX_MESSAGE_BYTES

__all__ = [
    "HEADER_EVENT_ID",
    "HEADER_SCHEMA_VERSION",
    "HEADER_TYPE",
    "MAX_JSON_DEPTH",
    "DecodeError",
    "OversizeMessage",
    "decode",
    "decode_current",
    "decode_json",
    "encode",
    "encode_dict",
    "field_path",
    "header_value",
    "headers_for",
    "json_depth",
    "validate",
]

logger = logging.getLogger(__name__)

#: Header names: consumers and tools can route or filter without parsing the value.
HEADER_TYPE = "type"
HEADER_SCHEMA_VERSION = "schema_version"
HEADER_EVENT_ID = "event_id"
#: Envelope fields with construction defaults that a reader must find in the payload itself.
REQUIRED_ON_READ = frozenset({"event_id", "occurred_at"})
#: Deepest JSON nesting a reader accepts. The deepest event (an episode's steps with a nested
#: tool call's arguments) is about a dozen levels; 64 leaves room for free-form parameters and
#: keeps every parser (json, pydantic, our own walks) far from Python's recursion limit.
MAX_JSON_DEPTH = 64

#: A JSON string (with escapes); what is left after removing them is structure and scalars.
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
#: Brackets that open or close a JSON container.
_BRACKETS = re.compile(rb"[\[\]{}]")


class DecodeError(SchemaError):
    """The bytes are not UTF-8 JSON (one sentence)."""


class OversizeMessage(SchemaError):
    """The message is larger than the configured max_message_bytes (one sentence)."""


def encode(event: Event) -> bytes:
    """The event as compact UTF-8 JSON (the same bytes every time for the same event)."""
    # The bytes model_dump_json would give, without its decode to str and our encode back.
    return event.__pydantic_serializer__.to_json(event, by_alias=True)


def encode_dict(data: dict[str, Any]) -> bytes:
    """A raw payload as compact UTF-8 JSON (tests and the archive's re-publisher use this)."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def headers_for(event: Event) -> list[tuple[str, bytes]]:
    """Kafka headers naming the event's type, schema version and id."""
    return [
        (HEADER_TYPE, event.type.encode()),
        (HEADER_SCHEMA_VERSION, str(event.schema_version).encode()),
        (HEADER_EVENT_ID, event.event_id.encode()),
    ]


def header_value(headers: Any, name: str) -> str | None:
    """The first header called `name` decoded as UTF-8 (None when absent)."""
    for key, value in headers or ():
        if key == name:
            return value.decode("utf-8", "replace") if value is not None else None
    return None


def json_depth(value: bytes, limit: int = MAX_JSON_DEPTH) -> int:
    """The nesting depth of the JSON text `value` (over `limit` exactly when the depth is),
    without parsing it: a C-speed bracket count first, which bounds the depth and is returned
    when it is within `limit`; else an exact walk over the brackets outside strings, stopping
    at `limit + 1`."""
    if value.count(b"[") + value.count(b"{") <= limit:
        return value.count(b"[") + value.count(b"{")
    depth = deepest = 0
    for match in _BRACKETS.finditer(_JSON_STRING.sub(b'""', value)):
        if match.group(0) in b"[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        else:
            depth -= 1
    return deepest


def decode_json(value: bytes | None, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
                max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parses the bytes as UTF-8 JSON, refusing oversize, empty, too deeply nested and non-JSON
    values (the size and depth are checked before parsing)."""
    if value is None:
        raise DecodeError("the message has no value (a tombstone); producers must not send "
                          "empty values")
    if len(value) > max_bytes:
        raise OversizeMessage(f"the message is {len(value)} bytes, over the {max_bytes}-byte "
                              f"limit; store large payloads in the blob store")
    if json_depth(value, max_depth) > max_depth:
        raise DecodeError(f"the message nests JSON deeper than {max_depth} levels; events are "
                          f"shallow objects, so it is refused unparsed")
    try:
        return json.loads(value.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise DecodeError(f"the message is not UTF-8 (bad byte at offset {error.start}); "
                          f"producers must send UTF-8 JSON") from None
    except json.JSONDecodeError as error:
        raise DecodeError(f"the message is not valid JSON ({error.msg} at offset {error.pos}); "
                          f"producers must send UTF-8 JSON") from None
    except (RecursionError, MemoryError) as error:  # guarded above; kept as a second wall
        raise DecodeError(f"the message could not be parsed ({type(error).__name__}); "
                          f"producers must send shallow UTF-8 JSON objects") from None


def field_path(loc: tuple[Any, ...], data: Any) -> str:
    """The dotted path of a pydantic error location as the payload spells it.

    Pydantic puts a union member's tag into the location (`steps.0.action.click.index`);
    walking the payload alongside drops every part that is not a key or index there,
    giving `steps.0.action.index`.
    """
    parts: list[str] = []
    node = data
    for part in loc:
        if isinstance(node, dict):
            if part not in node:
                continue  # a union tag or validator label, not a field
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            node = None
        parts.append(str(part))
    return ".".join(parts) or "<root>"


def _clean_invalid(data: Any, original: InvalidEvent) -> InvalidEvent:
    """`original` re-worded with a tag-free field path, when the model itself rejects `data`."""
    try:
        current = upcast(dict(data))
        model = EVENT_TYPES[current["type"]]
        model.model_validate(current)
    except ValidationError as error:
        first = error.errors()[0]
        loc = tuple(first["loc"])
        if first["type"] == "missing" and loc:
            # The missing key is absent from the payload by definition: name it anyway.
            parent = field_path(loc[:-1], current)
            path = str(loc[-1]) if parent == "<root>" else f"{parent}.{loc[-1]}"
        else:
            path = field_path(loc, current)
        more = error.error_count() - 1
        tail = f" (and {more} more error{'s' if more > 1 else ''})" if more else ""
        return InvalidEvent(f"invalid {current['type']} event: field '{path}': "
                            f"{first['msg']}{tail}", path)
    except (SchemaError, KeyError, TypeError, ValueError, RecursionError):
        return original
    return original


def validate(data: Any, topic: Topic) -> Event:
    """A decoded payload as an event of `topic`'s union (upcast, checked, clear field paths)."""
    try:
        return validate_event(data, allowed=topic.type_names)
    except InvalidEvent as error:
        if isinstance(data, dict):
            raise _clean_invalid(data, error) from None
        raise


def decode_current(value: bytes, topic: Topic, headers: Any) -> Event | None:
    """The event when the headers name a current-version type of `topic` and the bytes are
    exactly such an event, else None (the full path then decides, and words the error).

    The headers only pick the model: its `type` literal and current-version check make the
    payload itself agree. Strict JSON validation accepts a subset of what the lax full path
    accepts (no bool or string for an int, as `upcast` demands), and the envelope fields a
    reader must not default are checked to be present, so nothing is let through that the
    full path refuses.
    """
    type_name = version = None
    for key, raw in headers:
        if key == HEADER_TYPE:
            if type_name is None:
                type_name = raw
        elif key == HEADER_SCHEMA_VERSION and version is None:
            version = raw
    if not isinstance(type_name, bytes) or not isinstance(version, bytes):
        return None
    model = topic.models.get(type_name.decode("utf-8", "replace"))
    if model is None or version != b"%d" % model.current_version:
        return None
    try:
        event = model.model_validate_json(value, strict=True)
    except ValidationError:
        return None
    if not REQUIRED_ON_READ <= event.model_fields_set:
        return None
    return event


def decode(value: bytes | None, topic: Topic, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
           headers: Any = None) -> Event:
    """Bytes from `topic` as a validated event, older schema versions upcast to the current one.

    With the record's `headers` (pairs of name and bytes), an event of the current version
    is validated straight from the bytes (about twice as fast); the result and the errors
    are the same either way. Raises a `SchemaError` subclass (DecodeError, OversizeMessage,
    UnknownEventType, TypeNotAllowed, FutureSchemaVersion, InvalidEvent) with a one-sentence
    message, whatever went wrong inside: no input makes it raise anything else.
    """
    try:
        if headers and value is not None and len(value) <= max_bytes:
            event = decode_current(value, topic, headers)
            if event is not None:
                return event
        return validate(decode_json(value, max_bytes), topic)
    except SchemaError:
        raise
    except Exception as error:  # noqa: BLE001 - any failure on bad bytes is the bytes' fault
        raise DecodeError(f"the message could not be decoded ({type(error).__name__}); "
                          f"producers must send valid UTF-8 JSON events") from None
