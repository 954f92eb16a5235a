"""Codec: round trips, headers, and one clear error per kind of bad bytes."""

from __future__ import annotations

import json

import pytest

from schemas.registry import FutureSchemaVersion, InvalidEvent, TypeNotAllowed, UnknownEventType
from schemas.topics import TOPICS
from streams.codec import (
    DecodeError,
    OversizeMessage,
    decode,
    encode,
    encode_dict,
    field_path,
    header_value,
    headers_for,
    validate,
)
from streams.dlq import safe_preview
from tests.streams.helpers import episode, verdict

VERDICTS = TOPICS["flywheel.verdicts"]
EPISODES = TOPICS["flywheel.episodes"]


def test_round_trip_gives_an_equal_event_and_compact_json() -> None:
    event = episode(3, steps=2)
    value = encode(event)
    assert decode(value, EPISODES) == event
    assert b": " not in value and b", " not in value  # compact
    assert json.loads(value)["type"] == "episode.ended"


def test_headers_name_type_version_and_id() -> None:
    event = verdict(1)
    headers = headers_for(event)
    assert header_value(headers, "type") == "verdict.issued"
    assert header_value(headers, "schema_version") == "2"
    assert header_value(headers, "event_id") == event.event_id


@pytest.mark.parametrize(("value", "error", "words"), [
    (b"\xff\xfe garbage", DecodeError, "not UTF-8"),
    (b"{not json", DecodeError, "not valid JSON"),
    (None, DecodeError, "tombstone"),
    (b'{"type": "alien.landed", "schema_version": 1}', UnknownEventType, "alien.landed"),
])
def test_bad_bytes_raise_one_sentence_errors(value: bytes | None, error: type[Exception],
                                             words: str) -> None:
    with pytest.raises(error, match=words) as caught:
        decode(value, VERDICTS)
    assert "\n" not in str(caught.value)


def test_future_schema_version_is_refused() -> None:
    data = json.loads(encode(verdict()))
    data["schema_version"] = 99
    with pytest.raises(FutureSchemaVersion, match="upgrade the consumer"):
        decode(encode_dict(data), VERDICTS)


def test_a_type_of_another_topic_is_refused() -> None:
    with pytest.raises(TypeNotAllowed):
        decode(encode(verdict()), EPISODES)


def test_oversize_is_refused_before_parsing() -> None:
    value = encode(verdict(details={"blob": "x" * 5000}))
    with pytest.raises(OversizeMessage, match=f"{len(value)} bytes"):
        decode(value, VERDICTS, max_bytes=4096)
    assert decode(value, VERDICTS, max_bytes=len(value)).episode_id == "ep-0"


def test_v1_verdict_is_upcast_to_v2() -> None:
    data = json.loads(encode(verdict(passed=True, score=1.0)))
    data["schema_version"] = 1
    del data["score"]
    event = decode(encode_dict(data), VERDICTS)
    assert (event.schema_version, event.score, event.passed) == (2, 1.0, True)


def test_invalid_nested_field_is_named_without_union_tags() -> None:
    data = json.loads(encode(episode(steps=1)))
    data["steps"][0]["action"]["index"] = -1
    with pytest.raises(InvalidEvent, match=r"field 'steps\.0\.action\.index'") as caught:
        validate(data, EPISODES)
    assert caught.value.path == "steps.0.action.index"


def test_field_path_skips_parts_missing_from_the_payload() -> None:
    data = {"a": [{"b": {"kind": "k", "c": 1}}]}
    assert field_path(("a", 0, "b", "k", "c"), data) == "a.0.b.c"
    assert field_path((), data) == "<root>"


@pytest.mark.parametrize(("value", "expected"), [
    (b"plain text", "plain text"),
    (b"a\nb\x00c", "a\\nb\\x00c"),
    (b"\xff\xfe", "\\xff\\xfe"),
    (None, "<no value>"),
])
def test_safe_preview_escapes_what_a_terminal_cannot_show(value: bytes | None,
                                                          expected: str) -> None:
    assert safe_preview(value) == expected


def test_safe_preview_truncates_with_a_marker() -> None:
    preview = safe_preview(b"y" * 1000, limit=10)
    assert preview.startswith("y" * 10) and "1000 bytes" in preview
    assert len(preview) < 40
