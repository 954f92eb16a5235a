"""The typed producer refuses what a reader would refuse, naming the bad field."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from schemas.actions import Click
from schemas.envelope import is_validated
from schemas.episodes import EpisodeEnded, Step
from schemas.observations import Observation
from schemas.registry import InvalidEvent, TypeNotAllowed
from schemas.topics import Topic
from schemas.verdicts import VerdictIssued
from streams.codec import OversizeMessage, encode
from streams.consumer import TypedBatchConsumer
from streams.producer import TypedProducer
from tests.streams.helpers import drain, episode, verdict

pytestmark = pytest.mark.integration


def test_model_construct_event_fails_naming_the_field_path(
        bootstrap: str, fresh_topic: Callable[[str], Topic]) -> None:
    topic = fresh_topic("flywheel.episodes")
    bad_step = Step.model_construct(
        index=0, action=Click.model_construct(action_type="click", index=-1, x=None, y=None),
        observation=Observation(step=1, clock_ms=0), thought=None)
    event = episode().model_copy(update={"steps": [bad_step]})
    with TypedProducer(bootstrap) as producer, pytest.raises(InvalidEvent) as caught:
        producer.send(topic, event)
    assert str(caught.value).startswith("invalid episode.ended event: field "
                                        "'steps.0.action.index': ")


def test_send_dict_validates_and_names_the_field(
        bootstrap: str, fresh_topic: Callable[[str], Topic]) -> None:
    topic = fresh_topic("flywheel.verdicts")
    data = json.loads(encode(verdict()))
    data["score"] = 7
    with TypedProducer(bootstrap) as producer, pytest.raises(InvalidEvent, match="'score'"):
        producer.send_dict(topic, data)


def test_event_of_another_topic_is_refused(bootstrap: str,
                                           fresh_topic: Callable[[str], Topic]) -> None:
    topic = fresh_topic("flywheel.episodes")
    with TypedProducer(bootstrap) as producer, pytest.raises(TypeNotAllowed, match=topic.name):
        producer.send(topic, verdict())


def test_oversize_event_is_refused_at_the_producer(bootstrap: str,
                                                   fresh_topic: Callable[[str], Topic]) -> None:
    topic = fresh_topic("flywheel.verdicts")
    with TypedProducer(bootstrap, max_message_bytes=2048) as producer, \
            pytest.raises(OversizeMessage, match="blob store"):
        producer.send(topic, verdict(details={"blob": "z" * 4096}))


def test_sent_events_arrive_keyed_with_headers(bootstrap: str,
                                               fresh_topic: Callable[[str], Topic]) -> None:
    topic = fresh_topic("flywheel.verdicts")
    events = [verdict(i) for i in range(4)]
    with TypedProducer(bootstrap) as producer:
        metadata = [producer.send(topic, e) for e in events]
        producer.flush()
        assert all(m.get(timeout=30).topic == topic.name for m in metadata)
    with TypedBatchConsumer(bootstrap, [topic], "g-keys") as consumer:
        records = drain(consumer, len(events))
    assert sorted(r.event.event_id for r in records) == sorted(e.event_id for e in events)
    for r in records:
        assert r.key == r.event.episode_id.encode()
        assert dict(r.headers)["event_id"] == r.event.event_id.encode()


def test_model_construct_event_with_a_bad_field_is_refused(
        bootstrap: str, fresh_topic: Callable[[str], Topic]) -> None:
    topic = fresh_topic("flywheel.verdicts")
    bad = VerdictIssued.model_construct(**{**verdict().__dict__, "score": 7})
    with TypedProducer(bootstrap) as producer, pytest.raises(InvalidEvent, match="'score'"):
        producer.send(topic, bad)


def test_model_copy_with_a_bad_update_is_refused(
        bootstrap: str, fresh_topic: Callable[[str], Topic]) -> None:
    topic = fresh_topic("flywheel.verdicts")
    with TypedProducer(bootstrap) as producer, pytest.raises(InvalidEvent, match="'score'"):
        producer.send(topic, verdict().model_copy(update={"score": -1.0}))


def test_a_constructed_value_inside_a_built_event_is_refused(
        bootstrap: str, fresh_topic: Callable[[str], Topic]) -> None:
    topic = fresh_topic("flywheel.episodes")
    bad_click = Click.model_construct(action_type="click", index=-1, x=None, y=None)
    event = EpisodeEnded(**{**episode().__dict__,
                            "steps": [Step(index=0, action=bad_click,
                                           observation=Observation(step=1, clock_ms=0))]})
    with TypedProducer(bootstrap) as producer, pytest.raises(InvalidEvent) as caught:
        producer.send(topic, event)
    assert caught.value.path == "steps.0.action.index"


def test_only_events_built_without_validation_are_revalidated_and_all_round_trip(
        bootstrap: str, fresh_topic: Callable[[str], Topic]) -> None:
    topic = fresh_topic("flywheel.episodes")
    built = [episode(i, steps=2) for i in range(3)]
    constructed = EpisodeEnded.model_construct(**episode(9, steps=1).__dict__)
    with TypedProducer(bootstrap) as producer:
        for event in built:
            producer.send(topic, event)
        assert producer.revalidated == 0
        producer.send(topic, constructed)
        assert producer.revalidated == 1
        producer.flush()
    with TypedBatchConsumer(bootstrap, [topic], "g-fast") as consumer:
        records = drain(consumer, 4)
    by_id = {r.event.event_id: r.event for r in records}
    assert [by_id[e.event_id] for e in [*built, constructed]] == [*built, constructed]
    assert all(is_validated(r.event) for r in records)
