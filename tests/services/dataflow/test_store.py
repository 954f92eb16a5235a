"""The services' event store: what it keeps of an event, and that it folds each one once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from services.dataflow.store import EventStore, Stored
from streams.codec import encode
from tests.services.dataflow.helpers import proposed


def _payloads(path: Path) -> list[str]:
    with sqlite3.connect(path) as db:
        return [row[0] for row in db.execute("SELECT payload FROM events ORDER BY seq")]


def test_the_bytes_an_event_came_in_are_kept_as_they_are(tmp_path: Path) -> None:
    """A consumer hands over the wire bytes it decoded: they are stored unchanged (no second
    encode), and the store folds them back into the same event."""
    path = tmp_path / "store.sqlite"
    task = proposed()
    wire = encode(task).replace(b'{"', b'{ "', 1)  # a spacing no encoder of ours writes
    with EventStore(path) as store:
        assert store.append([Stored(task, "flywheel.tasks", 0, 7, wire)]) == 1
    assert _payloads(path) == [wire.decode()]
    with EventStore(path) as store:
        (loaded,) = list(store.load())
    assert (loaded.event, loaded.topic, loaded.partition, loaded.offset) == (task, "flywheel.tasks", 0, 7)


def test_an_event_without_its_bytes_is_encoded_and_a_redelivery_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    first, second = proposed(i=0), proposed(i=1)
    with EventStore(path) as store:
        assert store.append([Stored(first, "flywheel.tasks")]) == 1
        assert store.append([Stored(first, "flywheel.tasks", 0, 9, encode(first)),
                             Stored(second, "flywheel.tasks")]) == 1
    with EventStore(path) as store:
        assert [s.event for s in store.load()] == [first, second]
    assert len(_payloads(path)) == 2


def test_a_service_warms_up_once_before_its_store_is_replayed(tmp_path: Path) -> None:
    """Runner.restore calls the service's optional warm_up first: one-time costs belong to the
    start, not to the first event (and a service without one restores as before)."""
    from services.dataflow.runner import Runner

    calls: list[str] = []

    class Folding:
        name, inputs, apply_outputs = "folding", (), False

        def warm_up(self) -> None:
            calls.append("warm_up")

        def apply(self, stored: Stored) -> None:
            calls.append(stored.event.event_id)

    path = tmp_path / "store.sqlite"
    task = proposed()
    with EventStore(path) as store:
        store.append([Stored(task, "flywheel.tasks")])
        assert Runner(Folding(), store, producer=None).restore() == 1  # type: ignore[arg-type]
        del Folding.warm_up
        assert Runner(Folding(), store, producer=None).restore() == 1  # type: ignore[arg-type]
    assert calls == ["warm_up", task.event_id, task.event_id]
