"""A service's event store: every event it folded into its state, in order, in SQLite.

The faust services of the flywheel keep no changelog-backed tables (the local broker's
end offsets are wrong, DESIGN.md). Instead each one appends the events it consumed, and the
events it produced, to this store in one transaction *after* its outputs are acknowledged;
on start it rebuilds its state by folding `evolve` over the store. An event already in the
store (a redelivery after a crash) is skipped. Together with deterministic output ids
(`services.dataflow.ids`) this gives exactly-once effects on an at-least-once bus.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from schemas.envelope import Event
from schemas.registry import validate_event
from streams.lifecycle import Closing

__all__ = ["EventStore", "Stored"]

logger = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id TEXT NOT NULL UNIQUE,
    topic TEXT NOT NULL,
    partition INTEGER,
    "offset" INTEGER,
    payload TEXT NOT NULL
)
"""


@dataclass(frozen=True)
class Stored:
    """One folded event and where it came from (partition/offset are None for own outputs
    whose position was not known); `raw`, when given, is the JSON it was decoded from, stored
    as it is instead of encoding the event again."""

    event: Event
    topic: str
    partition: int | None = None
    offset: int | None = None
    raw: bytes | None = None


class EventStore(Closing):
    """Append-only, event-id-unique log of what a service folded (SQLite, WAL)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)
        self._ids: set[str] = {row[0] for row in self._db.execute("SELECT event_id FROM events")}

    def __contains__(self, event_id: object) -> bool:
        return event_id in self._ids

    def __len__(self) -> int:
        return len(self._ids)

    def append(self, items: Iterable[Stored]) -> int:
        """Stores the new ones of `items` atomically; returns how many were new."""
        rows = []
        for item in items:
            if item.event.event_id in self._ids:
                continue
            payload = item.raw.decode() if item.raw is not None else item.event.model_dump_json()
            rows.append((item.event.event_id, item.topic, item.partition, item.offset, payload))
        if not rows:
            return 0
        self._db.execute("BEGIN")
        try:
            self._db.executemany('INSERT OR IGNORE INTO events (event_id, topic, partition, '
                                 '"offset", payload) VALUES (?, ?, ?, ?, ?)', rows)
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._ids.update(row[0] for row in rows)
        return len(rows)

    def load(self) -> Iterator[Stored]:
        """Every stored event in the order it was folded."""
        cursor = self._db.execute('SELECT topic, partition, "offset", payload FROM events '
                                  "ORDER BY seq")
        for topic, partition, offset, payload in cursor:
            yield Stored(validate_event(json.loads(payload)), topic, partition, offset)

    def close(self) -> None:
        self._db.close()
