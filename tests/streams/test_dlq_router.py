"""The dead-letter router never raises: too large records go by reference to the blob store,
records the broker refuses are quarantined locally; dead letters keep the source headers."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from schemas.registry import InvalidEvent
from schemas.topics import Topic
from streams.dlq import DeadLetterRouter, quarantined, read_dead_letters
from streams.producer import TypedProducer

pytestmark = pytest.mark.integration


def test_a_record_too_large_to_dead_letter_whole_goes_by_reference(
        bootstrap: str, fresh_topic: Callable[[str], Topic], tmp_path: Path) -> None:
    topic = fresh_topic("flywheel.tasks")
    value = b"z" * (3 * 1024 * 1024)
    with DeadLetterRouter(bootstrap, data_dir=tmp_path) as router:
        router.route(topic.name, 1, 7, b"k", value, InvalidEvent("too big"),
                     headers=[("type", b"task.proposed"), ("trace", b"abc")])
        router.flush()
        assert router.oversize == 1 and router.quarantined == 0
    [letter] = read_dead_letters(bootstrap, topic.name)
    digest = hashlib.sha256(value).hexdigest()
    assert letter.value == b"" and letter.value_sha256 == digest
    assert (tmp_path / "blobs" / digest[:2] / digest).read_bytes() == value
    assert letter.source_headers == {"type": b"task.proposed", "trace": b"abc"}
    assert (letter.source_partition, letter.source_offset) == (1, 7)


def test_a_record_the_broker_refuses_is_quarantined_not_raised(
        bootstrap: str, fresh_topic: Callable[[str], Topic], tmp_path: Path) -> None:
    topic = fresh_topic("flywheel.tasks")
    # A producer whose request limit is below the record: the client refuses it outright.
    producer = TypedProducer(bootstrap, max_request_size=4096)
    try:
        router = DeadLetterRouter(producer, data_dir=tmp_path)
        router.route(topic.name, 0, 3, None, b"q" * 100_000, InvalidEvent("bad"))
        router.flush()
        assert router.quarantined == 1
    finally:
        producer.close()
    [kept] = quarantined(tmp_path)
    assert kept["headers"]["source_offset"] == "3" and kept["value_size"] == 100_000
    assert (tmp_path / "blobs" / kept["value_sha256"][:2] / kept["value_sha256"]).exists()


def test_the_same_failure_dead_lettered_again_is_shown_once_per_consumer(
        bootstrap: str, fresh_topic: Callable[[str], Topic], tmp_path: Path) -> None:
    """A consumer killed between its dead letter and its commit sends it again on restart."""
    topic = fresh_topic("flywheel.tasks")
    with DeadLetterRouter(bootstrap, data_dir=tmp_path) as router:
        for consumer in ("runner", "runner", "archiver"):
            router.route(topic.name, 2, 9, b"k", b"junk", InvalidEvent("bad"), consumer=consumer)
        router.route(topic.name, 2, 10, b"k", b"junk", InvalidEvent("bad"), consumer="runner")
    letters = read_dead_letters(bootstrap, topic.name)
    assert sorted((d.source_offset, d.consumer) for d in letters) == [
        (9, "archiver"), (9, "runner"), (10, "runner")]
