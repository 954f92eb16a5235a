"""The one strict decoder against what a lenient JSON reader lets through: each attack is
refused with one sentence, and the unattacked event beside it is accepted."""

from __future__ import annotations

import json

import pytest

from schemas.registry import InvalidEvent, SchemaError
from schemas.topics import TOPICS
from streams.codec import MAX_LIST_ITEMS, DecodeError, KeyMismatch, decode, encode
from tests.streams.helpers import episode, verdict

VERDICTS = TOPICS["flywheel.verdicts"]
EPISODES = TOPICS["flywheel.episodes"]


def _verdict_bytes(**changes: object) -> bytes:
    data = json.loads(encode(verdict()))
    data.update(changes)
    return json.dumps(data, ensure_ascii=True).encode()


def _replace(value: bytes, old: bytes, new: bytes) -> bytes:
    assert old in value, old
    return value.replace(old, new, 1)


GOOD = encode(verdict())

ATTACKS: list[tuple[str, bytes, type[SchemaError], str]] = [
    ("lone surrogate in a field", _replace(GOOD, b'"ep-0"', b'"X\\ud83dY"'), DecodeError, "surrogate"),
    ("lone low surrogate in a nested key",
     _verdict_bytes(details={"a": {"\udc00k": 1}}), DecodeError, "surrogate"),
    ("NaN", _replace(GOOD, b'"score":0.5', b'"score":NaN'), DecodeError, "NaN"),
    ("Infinity", _replace(GOOD, b'"score":0.5', b'"score":Infinity'), DecodeError, "Infinity"),
    ("-Infinity", _verdict_bytes().replace(b'"score": 0.5', b'"score": -Infinity'), DecodeError, "Infinity"),
    ("a float beyond range", _replace(GOOD, b'"score":0.5', b'"score":1e400'), DecodeError, "too large"),
    ("an int over int64", _verdict_bytes(details={"n": 2**63}), DecodeError, "64 bits"),
    ("an int under int64", _verdict_bytes(details={"n": -(2**63) - 1}), DecodeError, "64 bits"),
    ("a 400-digit int", _verdict_bytes(details={"n": 10**400}), DecodeError, "64 bits"),
    ("an int over int64 among short ones", _verdict_bytes(details={"a": 10**17, "n": 10**19, "b": -1}),
     DecodeError, "64 bits"),
    ("duplicate top-level key", GOOD[:-1] + b',"score":1.0}', DecodeError, "repeats the key 'score'"),
    ("duplicate nested key", _replace(GOOD, b'"details":{}', b'"details":{"a":1,"a":2}'), DecodeError,
     "repeats the key 'a'"),
    ("a list over the bound", _verdict_bytes(details={"xs": list(range(MAX_LIST_ITEMS + 1))}), DecodeError,
     "item limit"),
    ("a string for a float", _replace(GOOD, b'"score":0.5', b'"score":"0.5"'), InvalidEvent, "score"),
    ("true for a float", _replace(GOOD, b'"score":0.5', b'"score":true'), InvalidEvent, "score"),
    ("'yes' for a bool", _replace(GOOD, b'"passed":false', b'"passed":"yes"'), InvalidEvent, "passed"),
    ("1 for a bool", _replace(GOOD, b'"passed":false', b'"passed":0'), InvalidEvent, "passed"),
    ("a string for an int", _replace(GOOD, b'"schema_version":2', b'"schema_version":"2"'), InvalidEvent,
     "schema_version"),
]


def test_the_unattacked_event_decodes() -> None:
    decoded = decode(GOOD, VERDICTS, key=b"ep-0")
    assert (decoded.episode_id, decoded.score, decoded.passed) == ("ep-0", 0.5, False)
    pair = _replace(GOOD, b'"ep-0"', b'"ok \\ud83d\\ude00"')  # a whole pair is one character
    assert decode(pair, VERDICTS).episode_id == "ok \U0001f600"
    assert decode(_verdict_bytes(details={"n": 2**63 - 1, "xs": list(range(MAX_LIST_ITEMS))}),
                  VERDICTS).details["n"] == 2**63 - 1
    # a long run of digits inside a string is text: it only turns on the per-integer check
    assert decode(_verdict_bytes(details={"id": "9" * 40, "n": -(2**63)}), VERDICTS).details["n"] == -(2**63)


@pytest.mark.parametrize(("case", "value", "error", "words"), ATTACKS, ids=[a[0] for a in ATTACKS])
def test_each_attack_is_refused_in_one_sentence(case: str, value: bytes, error: type[SchemaError],
                                                words: str) -> None:
    with pytest.raises(error, match=words) as caught:
        decode(value, VERDICTS)
    sentence = str(caught.value)
    assert "\n" not in sentence and sentence.endswith(sentence.rstrip()) and len(sentence) < 400


def test_a_refused_surrogate_never_reaches_an_encoder() -> None:
    """The crash the verifier, curator and generator had: a decoded lone surrogate fails later
    in pydantic's serialiser. Decoding must refuse it first."""
    value = _replace(encode(episode()), b'"episode_id":"ep-0"', b'"episode_id":"X\\ud83dY"')
    with pytest.raises(DecodeError, match="surrogate"):
        decode(value, EPISODES)


def test_a_key_that_is_not_the_events_key_field_is_refused() -> None:
    assert decode(GOOD, VERDICTS, key=b"ep-0").episode_id == "ep-0"
    with pytest.raises(KeyMismatch, match="key 'other' but its verdict.issued event's episode_id is 'ep-0'"):
        decode(GOOD, VERDICTS, key=b"other")
    with pytest.raises(KeyMismatch, match="no key"):
        decode(GOOD, VERDICTS, key=None)
