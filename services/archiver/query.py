"""DuckDB over the archive: one view per topic (named after its last dotted part) and `events`."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import duckdb

from services.archiver.rows import is_dead_letter_topic
from services.archiver.store import ArchiveStore

__all__ = ["QueryResult", "open_archive", "run_query", "view_name"]

logger = logging.getLogger(__name__)

#: A view name must be a plain SQL identifier; anything else becomes an underscore.
_NOT_IDENT = re.compile(r"[^0-9a-zA-Z_]")


def view_name(topic: str) -> str:
    """`flywheel.tasks` → `tasks`; `flywheel.tasks.dlq` → `tasks_dlq`."""
    if is_dead_letter_topic(topic):
        base = topic.rsplit(".", 2)
        name = f"{base[-2]}_dlq" if len(base) >= 2 else topic
    else:
        name = topic.rsplit(".", 1)[-1]
    name = _NOT_IDENT.sub("_", name)
    return f"t_{name}" if name[0].isdigit() else name


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _scan(paths: list[str]) -> str:
    files = ", ".join(_sql_string(p) for p in paths)
    return f"read_parquet([{files}], hive_partitioning = false, union_by_name = true)"


def open_archive(store: ArchiveStore) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the archive's views; ArchiveMissing if none.

    Views are created over the file lists present now; open a new connection to see newer files.
    """
    store.require()
    con = duckdb.connect(":memory:")
    every: list[str] = []
    taken: set[str] = {"events"}
    for topic in store.topics():
        paths = [str(p) for p in store.files([topic])]
        every.extend(paths)
        name = view_name(topic)
        if name in taken:  # two topics share a last part: fall back to the full name
            name = _NOT_IDENT.sub("_", topic)
        taken.add(name)
        con.execute(f'CREATE VIEW "{name}" AS SELECT * FROM {_scan(paths)}')
    con.execute(f"CREATE VIEW events AS SELECT * FROM {_scan(every)}")
    return con


#: What an analyst's query may be: reads only (SELECT covers WITH, DESCRIBE, SUMMARIZE, SHOW).
READ_ONLY_STATEMENTS = frozenset({duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN})


def _read_only(con: duckdb.DuckDBPyConnection, sql: str, roots: list[Path]) -> None:
    """Refuses any statement but a read (COPY, ATTACH, INSTALL, CREATE, PRAGMA ...), then shuts
    the connection off from every file outside the archive and snapshot folders, so a query can
    neither write a file nor read one that is not the archive's."""
    for statement in con.extract_statements(sql):
        if statement.type not in READ_ONLY_STATEMENTS:
            raise duckdb.PermissionException(f"flywheel sql runs read-only queries; a {statement.type.name} "
                                             f"statement is refused")
    folders = ", ".join(_sql_string(str(Path(root).resolve()) + "/") for root in roots)
    con.execute(f"SET allowed_directories = [{folders}]")
    con.execute("SET enable_external_access = false")


class QueryResult:
    """Column names and rows of one query."""

    def __init__(self, columns: list[str], rows: list[tuple[object, ...]]) -> None:
        self.columns = columns
        self.rows = rows


def run_query(store: ArchiveStore, sql: str, snapshots: Path | None = None,
              readable: list[Path] | None = None) -> QueryResult:
    """Runs `sql` over the archive's views (and, given a snapshots folder, the `examples` and
    `snapshots` views of services.dataflow.views); duckdb.Error carries DuckDB's message. The
    query may read files under the archive, the snapshots and the `readable` folders only, and
    write none."""
    con = open_archive(store)
    if snapshots is not None:
        from services.dataflow.views import attach_snapshots

        attach_snapshots(con, snapshots)
    try:
        _read_only(con, sql, [store.root, *([snapshots] if snapshots is not None else []), *(readable or [])])
        cursor = con.execute(sql)
        columns = [d[0] for d in cursor.description] if cursor.description else []
        rows = cursor.fetchall() if cursor.description else []
        return QueryResult(columns, rows)
    finally:
        con.close()



def payloads(files: list[Path], types: tuple[str, ...], since: Any = None) -> list[tuple[str, dict[str, Any]]]:
    """(type, decoded payload) of every archived event of `types` in `files`, oldest first
    (optionally only those at or after `since`): the read `flywheel rescore` and `report` share."""
    import json

    if not files or not types:
        return []
    where = f"type IN ({', '.join('?' for _ in types)})" + (" AND occurred_at >= ?" if since is not None else "")
    params: list[Any] = [[str(f) for f in files], *types] + ([since] if since is not None else [])
    rows = duckdb.connect().execute(f"SELECT type, payload FROM read_parquet(?) WHERE {where} "
                                    "AND payload IS NOT NULL ORDER BY occurred_at", params).fetchall()
    return [(kind, json.loads(payload)) for kind, payload in rows]
