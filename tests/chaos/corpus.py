"""The poison corpus: every kind of bad record an outside tester (or an attacker) would send."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

from schemas.envelope import Event
from streams.codec import HEADER_EVENT_ID, HEADER_SCHEMA_VERSION, HEADER_TYPE, encode

__all__ = ["CANARY", "Poison", "poison_corpus"]

#: A secret that must never leave the payload it came in: token-shaped, unique per run.
CANARY = f"sk-canary{uuid.uuid4().hex[:12]}Q7x"

#: Over the consumers' 1 MiB limit, and over the dead-letter producer's request limit.
OVERSIZE_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class Poison:
    """One bad record: its kind, bytes and headers."""

    kind: str
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...] = ()
    key: bytes | None = b"poison"


def valid_key(event: Event) -> bytes:
    """The Kafka key `event` travels with on its topic."""
    from schemas.topics import TOPICS

    topic = next(t for t in TOPICS.values() if event.type in t.type_names)
    return topic.key_of(event)


def poison_corpus(valid: Event) -> list[Poison]:
    """Bad records for `valid`'s topic, built around one valid event of it."""
    good = json.loads(encode(valid))
    type_headers = ((HEADER_TYPE, valid.type.encode()), (HEADER_SCHEMA_VERSION, b"1"),
                    (HEADER_EVENT_ID, b"spoofed"))

    def variant(**changes: object) -> bytes:
        data = {**good, "event_id": uuid.uuid4().hex, **changes}
        return json.dumps(data).encode()

    missing = {k: v for k, v in good.items() if k != "episode_id"}
    # An episode whose one step names the screen of a step it never sent (episode.ended v2);
    # on other topics it is also a type the topic does not carry.
    step = {"index": 0, "action": {"action_type": "finish"},
            "observation": {"step": 1, "clock_ms": 0}, "screen_as_step": 3}
    unsent_screen = {"type": "episode.ended", "schema_version": 2, "event_id": uuid.uuid4().hex,
                     "occurred_at": good.get("occurred_at", "2026-12-07T00:00:00Z"),
                     "source": "chaos/0", "correlation_id": "chaos", "episode_id": "ep-chaos",
                     "task_id": "t", "device_id": "sim-0", "environment": "sim", "policy": "oracle",
                     "outcome": "finished", "steps": [step]}
    missing["event_id"] = uuid.uuid4().hex
    deep_inside = variant(task_params={"x": json.loads("[" * 70 + "]" * 70)})
    return [
        Poison("empty", b""),
        Poison("tombstone", None),
        Poison("garbage bytes", bytes(range(256)) * 4),
        Poison("truncated JSON", encode(valid)[:-7]),
        Poison("non-object JSON", b"[1, 2, 3]"),
        Poison("NaN", variant(step=float("nan")).replace(b"NaN", b"NaN")),
        Poison("huge number", variant(step=1).replace(b'"step": 1', b'"step": 1e999999')),
        Poison("invalid UTF-8", b'{"type": "\xff\xfe"}'),
        Poison("BOM", b"\xef\xbb\xbf" + encode(valid)),
        Poison("unknown type", variant(type=f"alien.{CANARY}")),
        Poison("future version", variant(schema_version=99)),
        Poison("missing field", json.dumps(missing).encode()),
        Poison("extra field", variant(surprise=1)),
        Poison("bad timestamp", variant(occurred_at="yesterday")),
        Poison("wrong type for field", variant(step="three")),
        Poison("duplicate keys", encode(valid)[:-1] + b',"step":"x"}'),
        Poison("duplicate keys, both valid", encode(valid)[:-1] + b',"event_id":"' + uuid.uuid4().hex.encode() + b'"}'),
        Poison("lone surrogate", variant(source="X\ud83dY")),
        Poison("int over int64", variant(schema_version=2**64)),
        Poison("Infinity", variant(step=1).replace(b'"step": 1', b'"step": Infinity')),
        Poison("coerced int", variant(step=str(good.get("step", 1)))),
        Poison("screen of an unsent step", json.dumps(unsent_screen).encode(), key=b"ep-chaos"),
        Poison("key is not the key field", encode(valid), key=b"not-" + valid_key(valid)),
        Poison("deep nesting", b"[" * 5000),
        Poison("deep nesting in a field", deep_inside),
        Poison("oversize", b'{"pad":"' + b"o" * OVERSIZE_BYTES + b'"}'),
        Poison("spoofed headers", b"not json", type_headers),
        Poison("secret in headers", b"\x00garbage",
               (("authorization", f"Bearer {CANARY}".encode()), ("error", b"forged"))),
        Poison("secret in payload", json.dumps({"type": "x", "token": CANARY}).encode()),
        Poison("many headers", b"{}", tuple((f"h{i}", b"v" * 200) for i in range(200))),
        Poison("huge key", b"{}", key=b"k" * 200_000),
    ]
