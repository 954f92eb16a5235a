"""The pure part: which records become rows, dead-letter ids, and the Arrow table."""

from __future__ import annotations

import json

from services.archiver.rows import ARCHIVE_SCHEMA, dead_letter_id, new_rows, to_table
from tests.services.archiver.helpers import Rec, record_of, task


def test_new_rows_skips_seen_and_in_batch_duplicates() -> None:
    records = [record_of(task(1)), record_of(task(2), offset=1), record_of(task(1), offset=2),
               record_of(task(3), offset=3)]
    rows = new_rows(records, seen={"ev00000003"})
    assert [r.event_id for r in rows] == ["ev00000001", "ev00000002"]


def test_undecoded_records_of_event_topics_are_not_rows() -> None:
    junk = Rec("flywheel.tasks", 0, 5, b"k", b"not json")
    assert new_rows([junk], seen=set()) == []


def test_dead_letter_id_ignores_offset_but_not_content() -> None:
    a = Rec("flywheel.tasks.dlq", 0, 1, b"k", b"bad", [("error", b"boom")])
    same_elsewhere = Rec("flywheel.tasks.dlq", 0, 99, b"k", b"bad", [("error", b"boom")],
                         timestamp_ms=5)
    other_bytes = Rec("flywheel.tasks.dlq", 0, 1, b"k", b"bad!", [("error", b"boom")])
    other_header = Rec("flywheel.tasks.dlq", 0, 1, b"k", b"bad", [("error", b"bang")])
    again_later = Rec("flywheel.tasks.dlq", 0, 7, b"k", b"bad",
                      [("error", b"boom"), ("failed_at", b"2024-05-01T00:00:00")])
    assert dead_letter_id(a) == dead_letter_id(same_elsewhere) == dead_letter_id(again_later)
    assert dead_letter_id(a) != dead_letter_id(other_bytes)
    assert dead_letter_id(a) != dead_letter_id(other_header)
    assert dead_letter_id(a).startswith("dlq-") and len(dead_letter_id(a)) <= 64


def test_each_consumers_refusal_of_one_record_is_its_own_row() -> None:
    """Two consumers refusing the same source record leave two dead letters, and both are kept;
    the same consumer refusing it again after a restart is still one."""
    source = [("source_topic", b"flywheel.tasks"), ("source_partition", b"0"), ("source_offset", b"7")]

    def letter(consumer: bytes, offset: int, error: bytes = b"boom") -> Rec:
        return Rec("flywheel.tasks.dlq", 0, offset, b"k", b"bad",
                   [("error", error), *source, ("consumer", consumer)])

    archiver, verifier = letter(b"flywheel-archiver", 1), letter(b"flywheel-verifier", 2)
    again = letter(b"flywheel-verifier", 9, error=b"reworded after an upgrade")
    rows = new_rows([archiver, verifier, again], seen=set())
    assert len(rows) == 2 and dead_letter_id(verifier) == dead_letter_id(again)


def test_table_holds_envelope_and_exact_payload() -> None:
    event = task(7)
    dead = Rec("flywheel.tasks.dlq", 0, 0, None, b"\xff\xfe", [("error", b"not UTF-8")])
    table = to_table(new_rows([record_of(event, partition=2, offset=41), dead], set()), 123)
    assert table.schema == ARCHIVE_SCHEMA
    first, second = table.to_pylist()
    assert (first["topic"], first["partition"], first["offset"]) == ("flywheel.tasks", 2, 41)
    assert first["event_id"] == "ev00000007" and first["type"] == "task.proposed"
    assert first["correlation_id"] == "run-1" and first["occurred_at"] == event.occurred_at
    assert first["payload"].encode() == record_of(event).value
    assert json.loads(first["payload"])["task_id"] == "task-7"
    assert {"key": "event_id", "value": b"ev00000007"} in first["headers"]
    assert second["raw"] == b"\xff\xfe" and second["payload"] is None
    assert second["error"] == "not UTF-8" and second["event_id"].startswith("dlq-")
    assert first["archived_at_ms"] == second["archived_at_ms"] == 123
