"""Codec: round trips, headers, and one clear error per kind of bad bytes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from schemas import registry
from schemas.envelope import is_validated
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
from tests.schemas.strategies import model_strategy
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
    (b'{"type": "alien.landed", "schema_version": 1}', registry.UnknownEventType, "alien.landed"),
])
def test_bad_bytes_raise_one_sentence_errors(value: bytes | None, error: type[Exception],
                                             words: str) -> None:
    with pytest.raises(error, match=words) as caught:
        decode(value, VERDICTS)
    assert "\n" not in str(caught.value)


def test_future_schema_version_is_refused() -> None:
    data = json.loads(encode(verdict()))
    data["schema_version"] = 99
    with pytest.raises(registry.FutureSchemaVersion, match="upgrade the consumer"):
        decode(encode_dict(data), VERDICTS)


def test_a_type_of_another_topic_is_refused() -> None:
    with pytest.raises(registry.TypeNotAllowed):
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
    with pytest.raises(registry.InvalidEvent, match=r"field 'steps\.0\.action\.index'") as caught:
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


@pytest.mark.parametrize("type_name", sorted(registry.EVENT_TYPES))
def test_every_event_type_decodes_strictly_from_what_the_encoder_writes(type_name: str) -> None:
    model = registry.EVENT_TYPES[type_name]
    topic = next(t for t in TOPICS.values() if type_name in t.type_names)

    @settings(max_examples=15, deadline=None,
              suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
    @given(model_strategy(model))
    def check(event) -> None:
        value = encode(event)
        decoded = decode(value, topic, key=topic.key_of(event))  # strict: all the encoder writes passes
        assert decoded == event and type(decoded) is model

    check()


def _with(data: dict[str, Any], **changes: Any) -> bytes:
    return encode_dict({**data, **changes})


def _cases() -> list[tuple[str, bytes, Any, list[tuple[str, bytes]]]]:
    good = verdict()
    data = json.loads(encode(good))
    headers = headers_for(good)
    no_id = {k: v for k, v in data.items() if k != "event_id"}
    no_time = {k: v for k, v in data.items() if k != "occurred_at"}
    return [
        ("header names another type", encode(episode()), VERDICTS, headers),
        ("header names a type of the topic", encode(verdict()), EPISODES,
         headers_for(episode())),
        ("event_id missing", encode_dict(no_id), VERDICTS, headers),
        ("occurred_at missing", encode_dict(no_time), VERDICTS, headers),
        ("schema_version is a bool", _with(json.loads(encode(episode())), schema_version=True),
         EPISODES, headers_for(episode())),
        ("schema_version is a string", _with(data, schema_version="2"), VERDICTS, headers),
        ("bad score", _with(data, score=7), VERDICTS, headers),
        ("not UTF-8", b"\xff\xfe garbage", VERDICTS, headers),
        ("not JSON", b"{not json", VERDICTS, headers),
        ("future version", _with(data, schema_version=99), VERDICTS,
         [("type", b"verdict.issued"), ("schema_version", b"99")]),
    ]


@pytest.mark.parametrize(("case", "value", "topic", "headers"), _cases(),
                         ids=[c[0] for c in _cases()])
def test_bad_payloads_are_refused_whatever_their_headers_claim(case: str, value: bytes, topic: Any,
                                                               headers: list[tuple[str, bytes]]) -> None:
    with pytest.raises(registry.SchemaError):
        decode(value, topic)


def test_an_old_version_is_upcast() -> None:
    data = json.loads(encode(verdict(passed=True, score=1.0)))
    data["schema_version"] = 1
    del data["score"]
    event = decode(encode_dict(data), VERDICTS)
    assert (event.schema_version, event.score) == (2, 1.0)


def test_oversize_is_refused() -> None:
    event = verdict(details={"blob": "x" * 5000})
    with pytest.raises(OversizeMessage):
        decode(encode(event), VERDICTS, max_bytes=4096)


def test_decoded_events_count_as_validated() -> None:
    assert is_validated(decode(encode(episode(steps=2)), EPISODES))


def test_json_depth_counts_only_brackets_outside_strings() -> None:
    from streams.codec import json_depth

    assert json_depth(b'{"a": [1, {"b": []}]}', limit=2) == 3
    assert json_depth(b'["[[[[[[[[", "]]]"]', limit=2) == 1
    assert json_depth(b"[" * 5000, limit=64) == 65  # stops counting once over the limit


@pytest.mark.parametrize("inside", ['"[[', '\\', '\\"]]', '\\\\"{{', '\\u0022[', 'a\\nb]]'])
def test_json_depth_reads_escaped_quotes_and_backslashes_as_a_parser_does(inside: str) -> None:
    """Over the bracket-count bound, strings are cut at their quotes once escaped backslashes and
    quotes are gone: a string holding brackets, escaped quotes or trailing backslashes must not
    shift what counts as outside it. Lists nested 64 deep pass, 65 deep are over the limit."""
    from streams.codec import json_depth

    value = json.dumps([[inside, "]]]"], [inside, "[["]])  # 2 levels, brackets in its strings
    for outer, depth in ((62, 64), (63, 65)):
        nested = ("[" * outer + value + "]" * outer).encode()
        assert json.loads(nested) is not None
        assert nested.count(b"[") > 64  # past the C-speed bound: the strings are cut out
        assert json_depth(nested, limit=64) == depth


def test_an_unterminated_string_stops_the_count_where_parsing_stops() -> None:
    """After an unmatched quote no parser descends further: the brackets there are string text."""
    from streams.codec import json_depth

    assert json_depth(b'[[["' + b"[" * 200, limit=64) == 3
    with pytest.raises(DecodeError, match="not valid JSON"):
        decode(b'[[["' + b"[" * 200, EPISODES)


@pytest.mark.parametrize("value", [b"[" * 5000, b'{"a":' * 100 + b"1" + b"}" * 100,
                                   b"[" * 100_000 + b"]" * 100_000])
def test_deep_nesting_is_refused_before_parsing(value: bytes) -> None:
    with pytest.raises(DecodeError, match="deeper than 64 levels"):
        decode(value, EPISODES)


def test_a_missing_field_is_named() -> None:
    data = json.loads(encode(verdict(1)))
    del data["episode_id"]
    with pytest.raises(registry.InvalidEvent, match="field 'episode_id': Field required") as caught:
        validate(data, TOPICS["flywheel.verdicts"])
    assert caught.value.path == "episode_id"


def test_any_failure_inside_decode_is_a_decode_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from streams import codec

    def explode(*_: object, **__: object) -> object:
        raise MemoryError

    monkeypatch.setattr(codec, "validate", explode)
    with pytest.raises(DecodeError, match="MemoryError"):
        decode(encode(verdict(1)), TOPICS["flywheel.verdicts"])
