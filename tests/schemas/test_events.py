"""Every event type round-trips through JSON, validates with clear errors, and upcasts."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas.registry import (
    EVENT_TYPES,
    FutureSchemaVersion,
    InvalidEvent,
    TypeNotAllowed,
    UnknownEventType,
    validate_event,
)
from schemas.topics import TOPICS
from schemas.verdicts import VerdictIssued
from tests.schemas.strategies import model_strategy

ENVELOPE = {"source": "test/0", "correlation_id": "run-1"}


@pytest.mark.parametrize("type_name", sorted(EVENT_TYPES))
def test_every_event_type_round_trips_through_json(type_name: str) -> None:
    model = EVENT_TYPES[type_name]

    @settings(max_examples=25, deadline=None,
              suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
    @given(model_strategy(model))
    def check(event) -> None:
        wire = json.loads(event.model_dump_json())
        again = validate_event(wire)
        assert again == event
        assert type(again) is model
        assert again.type == type_name

    check()


@given(st.sampled_from(sorted(EVENT_TYPES)))
def test_every_event_type_is_carried_by_exactly_one_topic(type_name: str) -> None:
    carriers = [t.name for t in TOPICS.values() if type_name in t.type_names]
    assert len(carriers) == 1, carriers


def _action_requested(**action) -> dict:
    return {"type": "action.requested", "event_id": "e1", "occurred_at": "2026-01-01T00:00:00Z",
            **ENVELOPE, "episode_id": "ep", "device_id": "sim-0", "step": 0, "action": action}


def test_invalid_event_error_names_the_field_path() -> None:
    with pytest.raises(InvalidEvent) as caught:
        validate_event(_action_requested(action_type="click", index=-3))
    assert caught.value.path == "action.click.index"
    assert "action.click.index" in str(caught.value)


def test_action_with_neither_index_nor_point_is_rejected() -> None:
    with pytest.raises(InvalidEvent, match="index or both x and y"):
        validate_event(_action_requested(action_type="click"))


def test_android_world_json_is_accepted_as_is() -> None:
    event = validate_event(_action_requested(action_type="input_text", text="hi", index=2))
    assert event.action.model_dump()["action_type"] == "input_text"


def test_unknown_type_and_future_version_are_distinct_errors() -> None:
    with pytest.raises(UnknownEventType):
        validate_event({"type": "episode.exploded", **ENVELOPE})
    future = _action_requested(action_type="navigate_home") | {"schema_version": 99}
    with pytest.raises(FutureSchemaVersion, match="newer than this reader"):
        validate_event(future)


def test_topic_union_rejects_types_it_does_not_carry() -> None:
    with pytest.raises(TypeNotAllowed):
        validate_event(_action_requested(action_type="navigate_home"),
                       allowed=TOPICS["flywheel.tasks"].type_names)


def test_reading_requires_the_event_id_instead_of_inventing_one() -> None:
    wire = _action_requested(action_type="navigate_home")
    del wire["event_id"]
    with pytest.raises(InvalidEvent, match="event_id"):
        validate_event(wire)


@pytest.mark.parametrize("passed, score", [(True, 1.0), (False, 0.0)])
def test_verdict_v1_is_upcast_to_v2_with_a_score(passed: bool, score: float) -> None:
    v1 = {"type": "verdict.issued", "schema_version": 1, "event_id": "v", **ENVELOPE,
          "occurred_at": "2026-01-01T00:00:00Z", "episode_id": "ep", "task_id": "t",
          "checker": "final_state", "passed": passed}
    event = validate_event(v1)
    assert isinstance(event, VerdictIssued)
    assert event.schema_version == 2
    assert event.score == score and event.passed is passed


def test_verdict_v1_payload_is_not_valid_v2_without_the_upcaster() -> None:
    v1 = {"type": "verdict.issued", "schema_version": 2, "event_id": "v", **ENVELOPE,
          "occurred_at": "2026-01-01T00:00:00Z", "episode_id": "ep", "task_id": "t",
          "checker": "final_state", "passed": True}
    with pytest.raises(InvalidEvent, match="score"):
        validate_event(v1)


def test_naive_timestamps_are_rejected() -> None:
    wire = _action_requested(action_type="navigate_home") | {"occurred_at": "2026-01-01T00:00:00"}
    with pytest.raises(InvalidEvent, match="occurred_at"):
        validate_event(wire)
