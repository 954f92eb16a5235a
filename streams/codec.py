"""Event <-> bytes: compact UTF-8 JSON values, envelope headers, and the one strict decoder.

`decode` is what every consumer (typed batch consumer, faust agents, the services' stores) reads
with. It refuses, with one sentence, what a lenient JSON reader would let through: duplicate keys,
NaN and Infinity, numbers outside a float or int64, lone UTF-16 surrogates (a `\\ud83d` escape
with no partner: Python keeps it, then every encoder, Parquet and DuckDB choke on it), lists over
MAX_LIST_ITEMS, coerced types (`"8"` for an int, `true` for a float: pydantic's strict JSON mode)
and, given the record's key, a key that is not the event's key field.
"""

from __future__ import annotations

import json
import logging
import math
import re
from typing import Any

from pydantic import ValidationError

from schemas.envelope import Event
from schemas.export import INT64_MAX, INT64_MIN, MAX_LIST_ITEMS  # the wire contract's bounds
from schemas.registry import (
    EVENT_TYPES,
    InvalidEvent,
    SchemaError,
    UnknownEventType,
    checked_envelope,
    upcast,
)
from schemas.topics import Topic
from streams.settings import DEFAULT_MAX_MESSAGE_BYTES

__all__ = [
    "HEADER_EVENT_ID",
    "HEADER_SCHEMA_VERSION",
    "HEADER_TYPE",
    "MAX_JSON_DEPTH",
    "MAX_LIST_ITEMS",
    "DecodeError",
    "KeyMismatch",
    "OversizeMessage",
    "decode",
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
#: Deepest JSON nesting a reader accepts. The deepest event (an episode's steps with a nested
#: tool call's arguments) is about a dozen levels; 64 leaves room for free-form parameters and
#: keeps every parser (json, pydantic, our own walks) far from Python's recursion limit.
MAX_JSON_DEPTH = 64

#: A \\u escape of a UTF-16 surrogate (D800-DFFF): only then can a decoded string hold a lone one.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
#: Container brackets as "(" and ")", and every other byte deleted (bytes.translate's two tables).
_AS_PARENS = bytes.maketrans(b"[]{}", b"()()")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
#: Digits as "0" and every other byte as " ": a run of 19 digits, the shortest integer that can
#: fall outside 64 bits (2**63 has 19), is then a C-speed substring test.
_DIGITS_AS_ZEROS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG_DIGITS = b"0" * 19


class DecodeError(SchemaError):
    """The bytes are not UTF-8 JSON (one sentence)."""


class OversizeMessage(SchemaError):
    """The message is larger than the configured max_message_bytes (one sentence)."""


class KeyMismatch(SchemaError):
    """The record's Kafka key is not the event's key field (partitioning and compaction lie)."""


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
    when it is within `limit`; else the brackets outside strings, as parentheses, lose every
    innermost pair per pass (C-speed `replace`) — the passes until none is left are the depth;
    it stops at `limit + 1`; unbalanced text (no pair left) adds its unclosed openers. Strings
    are cut out at their quotes (C-speed `split`, once escaped backslashes and quotes are
    gone); after an unmatched quote nothing counts, as no parser gets past that unterminated
    string."""
    bound = value.count(b"[") + value.count(b"{")
    if bound <= limit:
        return bound
    if b"\\" in value:  # escapes pair up left to right, as a parser reads them: drop the
        # escaped backslashes, then the escaped quotes, and no quote is left inside a string
        value = value.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside = b"".join(value.split(b'"')[::2])  # the pieces between quotes alternate
    brackets = outside.translate(_AS_PARENS, _NOT_BRACKETS)
    depth = 0
    while brackets and depth <= limit:
        shorter = brackets.replace(b"()", b"")
        if len(shorter) == len(brackets):  # unbalanced: its unclosed openers nest on
            return min(depth + brackets.count(b"("), limit + 1)
        brackets, depth = shorter, depth + 1
    return depth


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
    # An integer of 18 digits or fewer fits 64 bits: only text with a longer run of digits
    # needs the per-integer range check.
    parse_int = _int64 if _LONG_DIGITS in value.translate(_DIGITS_AS_ZEROS) else None
    try:
        data = json.loads(value.decode("utf-8"), object_pairs_hook=_unique_keys,
                          parse_constant=_no_constant, parse_float=_finite_float, parse_int=parse_int)
    except UnicodeDecodeError as error:
        raise DecodeError(f"the message is not UTF-8 (bad byte at offset {error.start}); "
                          f"producers must send UTF-8 JSON") from None
    except json.JSONDecodeError as error:
        raise DecodeError(f"the message is not valid JSON ({error.msg} at offset {error.pos}); "
                          f"producers must send UTF-8 JSON") from None
    except (RecursionError, MemoryError) as error:  # guarded above; kept as a second wall
        raise DecodeError(f"the message could not be parsed ({type(error).__name__}); "
                          f"producers must send shallow UTF-8 JSON objects") from None
    surrogates = _SURROGATE_ESCAPE.search(value) is not None
    if surrogates or value.count(b",") >= MAX_LIST_ITEMS:  # else no string or list can break a rule
        _check_strings_and_lists(data, surrogates)
    return data


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        repeated = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise DecodeError(f"the message repeats the key {_shown(repeated)} in one object; readers "
                          f"disagree on which value wins, so it is refused")
    return out


def _no_constant(name: str) -> Any:
    raise DecodeError(f"the message contains {name}, which is not JSON; send finite numbers")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise DecodeError(f"the number {text[:24]} is too large for a float; send finite numbers")
    return number


def _int64(text: str) -> int:
    if len(text) > 20 or not INT64_MIN <= (number := int(text)) <= INT64_MAX:
        raise DecodeError(f"the integer {text[:24]}{'...' if len(text) > 24 else ''} is outside "
                          f"64 bits; send integers between -2**63 and 2**63-1")
    return number


def _shown(text: str) -> str:
    return ascii(text[:40])


def _check_strings_and_lists(node: Any, surrogates: bool) -> None:
    """Refuses a lone surrogate in any key or string (when `surrogates`) and any list over
    MAX_LIST_ITEMS; iterative, so no payload can exhaust the stack."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if surrogates and _LONE_SURROGATE.search(item):
                raise DecodeError(f"the string {_shown(item)} holds a lone UTF-16 surrogate, which no "
                                  f"UTF-8 text can carry; send whole characters")
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            if len(item) > MAX_LIST_ITEMS:
                raise DecodeError(f"the message holds a list of {len(item)} items, over the "
                                  f"{MAX_LIST_ITEMS}-item limit; store large lists in the blob store")
            stack.extend(item)


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


def _described(error: ValidationError, data: dict[str, Any], type_name: str) -> InvalidEvent:
    """The first validation error as one sentence with a tag-free field path."""
    first = error.errors()[0]
    loc = tuple(first["loc"])
    if first["type"] == "missing" and loc:
        # The missing key is absent from the payload by definition: name it anyway.
        parent = field_path(loc[:-1], data)
        path = str(loc[-1]) if parent == "<root>" else f"{parent}.{loc[-1]}"
    else:
        path = field_path(loc, data)
    more = error.error_count() - 1
    tail = f" (and {more} more error{'s' if more > 1 else ''})" if more else ""
    return InvalidEvent(f"invalid {type_name} event: field '{path}': {first['msg']}{tail}", path)


def validate(data: Any, topic: Topic, raw: bytes | None = None) -> Event:
    """A decoded payload as an event of `topic`'s union: upcast when older, then validated in
    pydantic's strict JSON mode (no coercion: a string is no int, a bool no float) from `raw`,
    the JSON text `data` was parsed from (encoded from `data` when not given or upcast)."""
    if not isinstance(data, dict):
        raise InvalidEvent(f"an event must be a JSON object, got {type(data).__name__}")
    type_name = data.get("type")
    model = EVENT_TYPES.get(type_name) if isinstance(type_name, str) else None
    if model is None:
        raise UnknownEventType(f"unknown event type {type_name!r}", "type")
    if "schema_version" not in data:  # checked before an upcast would add it
        raise InvalidEvent(f"invalid {type_name} event: field 'schema_version': Field required", "schema_version")
    if data["schema_version"] != model.current_version:
        data, raw = upcast(dict(data)), None  # raises the sentence for a bad or future version
    model = checked_envelope(data, topic.type_names)
    try:
        return model.model_validate_json(raw if raw is not None else encode_dict(data), strict=True)
    except ValidationError as error:
        raise _described(error, data, data["type"]) from None


def decode(value: bytes | None, topic: Topic, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
           key: bytes | None | object = ...) -> Event:
    """Bytes from `topic` as a validated event, older schema versions upcast to the current one.

    The one strict decoder (see the module's docstring). Given the record's `key`, the event's
    key field must match it. Raises a `SchemaError` subclass (DecodeError, OversizeMessage,
    UnknownEventType, TypeNotAllowed, FutureSchemaVersion, InvalidEvent, KeyMismatch) with a
    one-sentence message, whatever went wrong inside: no input makes it raise anything else.
    """
    try:
        event = validate(decode_json(value, max_bytes), topic, value)
    except SchemaError:
        raise
    except Exception as error:  # noqa: BLE001 - any failure on bad bytes is the bytes' fault
        raise DecodeError(f"the message could not be decoded ({type(error).__name__}); "
                          f"producers must send valid UTF-8 JSON events") from None
    if key is not ... and key != topic.key_of(event):
        shown = "no key" if key is None else f"key {_shown(bytes(key).decode('utf-8', 'replace'))}"  # type: ignore[arg-type]
        raise KeyMismatch(f"the record has {shown} but its {event.type} event's {topic.key} is "
                          f"{_shown(str(getattr(event, topic.key)))}; producers key each event by "
                          f"its {topic.key}", "key")
    return event
