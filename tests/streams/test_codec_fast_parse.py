"""The strict decoder's fast parse (jiter) accepts exactly what the strict Python parse accepts,
with the same values, and refuses the rest in the strict parse's own sentence: checked on every
attack, on hand-picked edge cases, and on seeded mutations of real events."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from streams import codec
from streams.codec import DecodeError, decode_json, encode
from tests.streams.helpers import episode, verdict
from tests.streams.test_strict_decode import ATTACKS


def _outcome(value: bytes) -> tuple[str, str]:
    """What decode_json makes of `value`: the value (repr: 0 is not 0.0, -0.0 not 0.0) or the
    refusal's class and sentence."""
    try:
        return "ok", repr(decode_json(value))
    except DecodeError as error:
        return type(error).__name__, str(error)


def _strict(value: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """The same, with the fast parse refusing everything (so only the strict path decides)."""
    class Refusing:
        @staticmethod
        def from_json(*_: Any, **__: Any) -> Any:
            raise ValueError("refused")

    with monkeypatch.context() as patched:
        patched.setattr(codec, "jiter", Refusing)
        return _outcome(value)


EDGES = [b'{"a":1,"\\u0061":2}', b'{"a":{"b":1,"b":2}}', b'"\xed\xa0\x80"', b'"\xff"', b'"a\x01b"',
         b'\x0c{}', b'{}\x0c', b' {} ', b'NaN', b'[Infinity]', b'[-Infinity]', b'1e999', b'[1e308]', b'[2e308]',
         b'[1E400]', b'[-1e-400]', b'[1e-999]', b'"\\ud800"', b'"\\uDD1E\\uD834"', b'"\\uD834\\uDD1E"', b'[1,]',
         b"{'a':1}", b'01', b'-0', b'-0.0', b'1.', b'.5', b'"\\x"', b'\xef\xbb\xbf{}', b'"\xc0\x80"',
         b'{"a":1}{"b":2}', b'\x00', b'[+1]', b'[0x10]', b'9223372036854775807', b'9223372036854775808',
         b'[123456789012345678.5e99]', b'[' + b'9' * 400 + b'.0]', b'{"\\u0000":"\\u0000"}', b'"\x7f"']


@pytest.mark.parametrize("value", EDGES + [a[1] for a in ATTACKS])
def test_the_fast_parse_agrees_with_the_strict_one(value: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _outcome(value) == _strict(value, monkeypatch)


def test_a_plain_event_takes_the_fast_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = codec.jiter.from_json
    monkeypatch.setattr(codec.jiter, "from_json", lambda *a, **k: calls.append(1) or real(*a, **k))
    for event in (verdict(), episode(steps=3)):
        raw = encode(event)
        assert decode_json(raw) == json.loads(raw)
    assert len(calls) == 2
    with pytest.raises(DecodeError, match="64 bits"):  # a long digit run goes to the strict path
        decode_json(b'{"n":12345678901234567890}')
    assert len(calls) == 2


#: What a mutation may put in: JSON's punctuation, escapes, the literals the strict rules refuse,
#: numbers at the edges, bytes that are not UTF-8.
PIECES = [b'"', b"\\", b"{", b"}", b"[", b"]", b",", b":", b" ", b"\x01", b"NaN", b"Infinity", b"1e999",
          b"-0", b"1e308", b"2e308", b"\\ud83d", b"\\u0061", b"\xff", b"\xed\xa0\x80", b"true", b"null",
          b"9" * 19, b"0.5", b"e5", b"E-400"]


def _mutate(raw: bytes, rng: random.Random) -> bytes:
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(raw) + 1)
        kind = rng.random()
        if kind < 0.4:
            raw = raw[:at] + rng.choice(PIECES) + raw[at:]
        elif kind < 0.7:
            raw = raw[:at] + raw[at + rng.randint(1, 4):]
        elif kind < 0.85 and b"{" in raw:  # a repeated key in some object
            brace = raw.find(b"{", at) if raw.find(b"{", at) != -1 else raw.find(b"{")
            raw = raw[:brace + 1] + rng.choice([b'"k":1,"k":2,', b'"\\u006b":1,"k":2,']) + raw[brace + 1:]
        else:
            raw = raw[:at] + bytes([rng.randrange(256)]) + raw[at + 1:]
    return raw


def test_mutated_events_get_the_same_answer_from_both_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(20261208)
    originals = [encode(verdict()), encode(episode(steps=4)), encode(verdict(details={"a": [1, 2.5, "x"]}))]
    accepted = refused = 0
    for _ in range(1500):
        value = _mutate(rng.choice(originals), rng)
        fast, strict = _outcome(value), _strict(value, monkeypatch)
        assert fast == strict, value
        accepted += fast[0] == "ok"
        refused += fast[0] != "ok"
    assert accepted > 100 and refused > 100  # both answers were exercised
