"""DuckDB sink: a redelivered batch changes nothing, also across a consumer crash."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from schemas.envelope import Event
from schemas.topics import Topic
from streams.consumer import TypedBatchConsumer
from streams.producer import TypedProducer
from streams.sinks import DuckDBSink
from tests.streams.helpers import drain, verdict

SCORE_COLUMNS = {"event_id": "VARCHAR", "episode_id": "VARCHAR", "score": "DOUBLE"}


def score_row(event: Event) -> list[dict[str, object]]:
    return [{"event_id": event.event_id, "episode_id": event.episode_id, "score": event.score}]


def test_redelivered_batch_is_a_no_op(tmp_path: Path) -> None:
    events = [verdict(i, score=i / 10) for i in range(5)]
    with DuckDBSink(tmp_path / "s.duckdb", "scores", SCORE_COLUMNS, score_row) as sink:
        assert sink.write(events[:3]) == 3
        assert sink.write(events) == 2  # overlapping redelivery: only the new two
        assert sink.write(events) == 0
        assert sink.write(events + events) == 0
        assert sink.count() == 5
        assert sink.execute("SELECT round(sum(score), 6) FROM scores") == [(1.0,)]


def test_duplicates_inside_one_batch_are_written_once(tmp_path: Path) -> None:
    event = verdict(1)
    with DuckDBSink(tmp_path / "s.duckdb", "events") as sink:
        assert sink.write([event, event]) == 1
        assert sink.count() == 1


def test_failed_row_fn_rolls_back_the_tracking_key(tmp_path: Path) -> None:
    def broken(event: Event) -> list[dict[str, object]]:
        return [{"event_id": event.event_id, "no_such_column": 1}]

    event = verdict(2)
    with DuckDBSink(tmp_path / "s.duckdb", "t", SCORE_COLUMNS, broken) as sink, \
            pytest.raises(ValueError, match="no_such_column"):
        sink.write([event])
    with DuckDBSink(tmp_path / "s.duckdb", "t", SCORE_COLUMNS, score_row) as sink:
        assert sink.write([event]) == 1  # not marked as written by the failed transaction


def test_sink_survives_reopening(tmp_path: Path) -> None:
    events = [verdict(i) for i in range(3)]
    with DuckDBSink(tmp_path / "s.duckdb", "events") as sink:
        sink.write(events)
    with DuckDBSink(tmp_path / "s.duckdb", "events") as sink:
        assert sink.write(events) == 0
        assert sink.count() == 3


@pytest.mark.integration
def test_uncommitted_batch_is_redelivered_and_the_sink_dedupes(
        bootstrap: str, fresh_topic: Callable[[str], Topic], tmp_path: Path) -> None:
    topic = fresh_topic("flywheel.verdicts")
    events = [verdict(i) for i in range(8)]
    with TypedProducer(bootstrap) as producer:
        for e in events:
            producer.send(topic, e)
        producer.flush()
    with DuckDBSink(tmp_path / "s.duckdb", "scores", SCORE_COLUMNS, score_row) as sink:
        with TypedBatchConsumer(bootstrap, [topic], "g-crash") as first:
            batch = drain(first, len(events), commit=False)
            assert sink.write(batch) == len(events)
            # crash: close without committing
        with TypedBatchConsumer(bootstrap, [topic], "g-crash") as second:
            again = drain(second, len(events))
        assert sorted(r.event.event_id for r in again) == sorted(e.event_id for e in events)
        assert sink.write(again) == 0
        assert sink.count() == len(events)
