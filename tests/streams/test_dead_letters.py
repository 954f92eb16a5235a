"""Bad messages on a real topic land in the DLQ with every header; the rest flows on."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest
from aiokafka import TopicPartition

from schemas.registry import SchemaError
from schemas.topics import Topic
from streams.codec import encode, encode_dict
from streams.consumer import RawRecord, TypedBatchConsumer, raise_all
from streams.dlq import DLQ_HEADERS, read_dead_letters
from streams.producer import TypedProducer
from tests.streams.helpers import drain, verdict

pytestmark = pytest.mark.integration

#: The consumer's size limit in these tests; the oversize message is just above it.
SMALL_LIMIT = 8 * 1024


def _bad_values() -> dict[str, bytes]:
    future = json.loads(encode(verdict(90)))
    future["schema_version"] = 3
    unknown = {"type": "alien.landed", "schema_version": 1, "event_id": "x"}
    oversize = verdict(91, details={"blob": "o" * SMALL_LIMIT})
    return {
        "DecodeError": b"\x00\xffnot json at all",
        "UnknownEventType": encode_dict(unknown),
        "FutureSchemaVersion": encode_dict(future),
        "OversizeMessage": encode(oversize),
    }


def test_bad_messages_are_dead_lettered_and_valid_ones_delivered(
        bootstrap: str, fresh_topic: Callable[[str], Topic]) -> None:
    topic = fresh_topic("flywheel.verdicts")
    bad = _bad_values()
    good = [verdict(i) for i in range(6)]
    with TypedProducer(bootstrap) as producer:
        producer.send(topic, good[0])
        producer.send(topic, good[1])
        for value in bad.values():  # all on one key so they share a partition with good[2:]
            producer.send_raw(topic.name, value, key=b"ep-2")
        for event in good[2:]:
            producer.send(topic, event)
        producer.flush()

    with TypedBatchConsumer(bootstrap, [topic], "g-dlq", max_message_bytes=SMALL_LIMIT) as c:
        records = drain(c, len(good), dead_letters=len(bad))
        assert c.dead_lettered == len(bad)
        committed = {p: c.committed(TopicPartition(topic.name, p))
                     for p in c.partitions_for(topic.name)}

    assert sorted(r.event.event_id for r in records) == sorted(e.event_id for e in good)
    assert sum(offset or 0 for offset in committed.values()) == len(good) + len(bad)

    letters = read_dead_letters(bootstrap, topic.name, limit=50)
    assert sorted(d.error_type for d in letters) == sorted(bad)
    for letter in letters:
        assert letter.value == bad[letter.error_type]  # the raw bytes, untouched
        assert letter.source_topic == topic.name
        assert letter.source_partition is not None and letter.source_offset is not None
        assert letter.error and "\n" not in letter.error
        assert letter.failed_at
    raw_headers = _dlq_header_names(bootstrap, topic)
    assert all(set(DLQ_HEADERS) <= names for names in raw_headers)


def _dlq_header_names(bootstrap: str, topic: Topic) -> list[set[str]]:
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KafkaTopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None,
                             auto_offset_reset="earliest")
    try:
        tp = KafkaTopicPartition(topic.dlq, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        out: list[set[str]] = []
        for _ in range(40):
            for records in consumer.poll(timeout_ms=250).values():
                out.extend({k for k, _ in r.headers} for r in records)
            if len(out) >= 4:
                break
        return out
    finally:
        consumer.close()


def test_v1_verdict_on_the_wire_is_read_as_v2(bootstrap: str,
                                              fresh_topic: Callable[[str], Topic]) -> None:
    topic = fresh_topic("flywheel.verdicts")
    v1 = json.loads(encode(verdict(7, passed=True, score=1.0)))
    v1["schema_version"] = 1
    del v1["score"]
    with TypedProducer(bootstrap) as producer:
        producer.send_raw(topic.name, encode_dict(v1), key=b"ep-7")
        producer.flush()
    with TypedBatchConsumer(bootstrap, [topic], "g-upcast") as consumer:
        [record] = drain(consumer, 1)
    assert record.event.schema_version == 2
    assert record.event.score == 1.0 and record.event.passed is True
    assert record.event.event_id == v1["event_id"]


def test_raise_handler_stops_at_the_first_bad_message(
        bootstrap: str, fresh_topic: Callable[[str], Topic]) -> None:
    topic = fresh_topic("flywheel.verdicts")
    seen: list[tuple[RawRecord, SchemaError]] = []

    def handler(record: RawRecord, error: SchemaError) -> str:
        seen.append((record, error))
        return raise_all(record, error)

    with TypedProducer(bootstrap) as producer:
        producer.send_raw(topic.name, b"garbage", key=b"k")
        producer.flush()
    with TypedBatchConsumer(bootstrap, [topic], "g-raise", on_error=handler) as consumer, \
            pytest.raises(SchemaError, match="not valid JSON"):
        drain(consumer, 1)
    assert [r.value for r, _ in seen] == [b"garbage"]
    assert read_dead_letters(bootstrap, topic.name, idle_ms=500) == []


def test_a_key_filter_passes_over_others_records_but_still_dead_letters_its_own(
        bootstrap: str, fresh_topic: Callable[[str], Topic]) -> None:
    """`wanted` skips records by key before decoding: another reader's poison is not this
    reader's to dead-letter, while poison under a wanted key still goes to the DLQ and no
    wanted record is lost; passed-over records are committed past like the rest."""
    topic = fresh_topic("flywheel.verdicts")
    with TypedProducer(bootstrap) as producer:
        producer.send(topic, verdict(1, episode_id="mine"))
        producer.send_raw(topic.name, b"\x00not json", key=b"mine")
        producer.send(topic, verdict(2, episode_id="theirs"))
        producer.send_raw(topic.name, b"\x00not json either", key=b"theirs")
        producer.send(topic, verdict(3, episode_id="mine"))
        producer.flush()
    with TypedBatchConsumer(bootstrap, [topic], "g-wanted", wanted=b"mine".__eq__) as c:
        records = drain(c, 2, dead_letters=1)
        deadline = time.monotonic() + 60
        while c.passed_over < 2 and time.monotonic() < deadline:
            records += c.poll_batch(timeout_ms=500)
            c.commit()
        committed = sum(c.committed(TopicPartition(topic.name, p)) or 0
                        for p in c.partitions_for(topic.name))
        assert (c.dead_lettered, c.passed_over) == (1, 2)
    assert sorted(r.event.episode_id for r in records) == ["mine", "mine"]
    assert committed == 5
    letters = read_dead_letters(bootstrap, topic.name, limit=10)
    assert [d.value for d in letters] == [b"\x00not json"]
