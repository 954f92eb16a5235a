"""Idempotent DuckDB sink: rows plus their event ids in one transaction; redelivery is a no-op."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from schemas.envelope import Event
from streams.lifecycle import Closing

__all__ = ["DEFAULT_COLUMNS", "DuckDBSink", "RowFn", "default_row"]

logger = logging.getLogger(__name__)

#: Table and column names are interpolated into SQL, so only plain identifiers are accepted.
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")

#: What an event becomes without a row_fn: the envelope plus the whole event as JSON.
DEFAULT_COLUMNS: dict[str, str] = {
    "event_id": "VARCHAR",
    "type": "VARCHAR",
    "schema_version": "INTEGER",
    "occurred_at": "TIMESTAMPTZ",
    "correlation_id": "VARCHAR",
    "payload": "JSON",
}

#: Turns one event into zero or more rows (each a mapping of column name to value).
RowFn = Callable[[Event], Sequence[Mapping[str, Any]]]


def default_row(event: Event) -> Sequence[Mapping[str, Any]]:
    """One row per event: envelope columns plus the event's JSON."""
    return [{
        "event_id": event.event_id, "type": event.type, "schema_version": event.schema_version,
        "occurred_at": event.occurred_at, "correlation_id": event.correlation_id,
        "payload": event.model_dump_json(),
    }]


def _identifier(name: str, what: str) -> str:
    if not IDENTIFIER.match(name):
        raise ValueError(f"{what} {name!r} is not a plain SQL identifier; use letters, digits "
                         f"and underscores")
    return name


class DuckDBSink(Closing):
    """Writes events' rows into `table` and each event id into `<table>__tracking`
    (PRIMARY KEY) in one DuckDB transaction; events already tracked are skipped."""

    def __init__(self, path: Path | str, table: str, columns: Mapping[str, str] | None = None,
                 row_fn: RowFn | None = None) -> None:
        if (columns is None) != (row_fn is None):
            raise ValueError("give DuckDBSink both columns and row_fn, or neither for the "
                             "default envelope + JSON row")
        self.table = _identifier(table, "table")
        self.tracking = _identifier(f"{table}__tracking", "table")
        self.columns = dict(columns or DEFAULT_COLUMNS)
        for column in self.columns:
            _identifier(column, "column")
        self.row_fn: RowFn = row_fn or default_row
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._con = duckdb.connect(str(path))
        column_sql = ", ".join(f"{name} {sql_type}" for name, sql_type in self.columns.items())
        self._con.execute(f"CREATE TABLE IF NOT EXISTS {self.table} ({column_sql})")
        self._con.execute(f"CREATE TABLE IF NOT EXISTS {self.tracking} "
                          f"(event_id VARCHAR PRIMARY KEY, written_at TIMESTAMPTZ NOT NULL)")

    def write(self, events: Iterable[Event | Any]) -> int:
        """Writes the events not written before (records with an `.event` are accepted);
        returns how many events were new."""
        unique: dict[str, Event] = {}
        for item in events:
            event = item if isinstance(item, Event) else item.event
            unique.setdefault(event.event_id, event)
        if not unique:
            return 0
        con = self._con
        con.begin()
        try:
            ids = pa.table({"event_id": pa.array(list(unique), pa.string())})
            con.register("flywheel_batch_ids", ids)
            seen = {row[0] for row in con.execute(
                f"SELECT t.event_id FROM {self.tracking} t "
                f"JOIN flywheel_batch_ids b USING (event_id)").fetchall()}
            con.unregister("flywheel_batch_ids")
            new = [event for event_id, event in unique.items() if event_id not in seen]
            if new:
                now = datetime.now(UTC)
                tracked = pa.table({
                    "event_id": pa.array([e.event_id for e in new], pa.string()),
                    "written_at": pa.array([now] * len(new), pa.timestamp("us", tz="UTC")),
                })
                con.register("flywheel_new_ids", tracked)
                con.execute(f"INSERT INTO {self.tracking} SELECT event_id, written_at "
                            f"FROM flywheel_new_ids")
                con.unregister("flywheel_new_ids")
                rows = [row for event in new for row in self.row_fn(event)]
                if rows:
                    self._insert_rows(rows)
            con.commit()
        except BaseException:
            con.rollback()
            raise
        logger.debug("%s: %d new of %d events", self.table, len(new), len(unique))
        return len(new)

    def _insert_rows(self, rows: Sequence[Mapping[str, Any]]) -> None:
        names = list(self.columns)
        unknown = set().union(*(row.keys() for row in rows)) - set(names)
        if unknown:
            raise ValueError(f"row_fn returned columns {sorted(unknown)} that table "
                             f"{self.table} does not have; add them to `columns`")
        data = pa.table({name: pa.array([row.get(name) for row in rows]) for name in names})
        self._con.register("flywheel_rows", data)
        selected = ", ".join(f"CAST({n} AS {t})" for n, t in self.columns.items())
        self._con.execute(f"INSERT INTO {self.table} ({', '.join(names)}) "
                          f"SELECT {selected} FROM flywheel_rows")
        self._con.unregister("flywheel_rows")

    def count(self) -> int:
        """Rows in the table."""
        return int(self._con.execute(f"SELECT count(*) FROM {self.table}").fetchone()[0])

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Runs a query on the sink's connection (DuckDB allows one writer per file)."""
        return self._con.execute(sql, list(params)).fetchall()

    def close(self) -> None:
        self._con.close()
