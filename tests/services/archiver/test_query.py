"""DuckDB over the archive: views per topic, `events`, and payload JSON access."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from services.archiver.query import run_query, view_name
from services.archiver.rows import new_rows, to_table
from services.archiver.store import ArchiveMissing, ArchiveStore
from tests.services.archiver.helpers import Rec, record_of, task


def test_view_names() -> None:
    assert view_name("flywheel.tasks") == "tasks"
    assert view_name("flywheel.tasks.dlq") == "tasks_dlq"
    assert view_name("tmp-1a2b.episodes") == "episodes"
    assert view_name("9lives") == "t_9lives"


@pytest.fixture()
def store(tmp_path: Path) -> ArchiveStore:
    store = ArchiveStore(tmp_path)
    records = [record_of(task(i), offset=i) for i in range(6)]
    records.append(Rec("flywheel.tasks.dlq", 0, 0, None, b"junk", [("error", b"bad json")]))
    store.write(to_table(new_rows(records, set()), 1))
    return store


def test_topic_views_and_events(store: ArchiveStore) -> None:
    result = run_query(store, "SELECT count(*) AS n, min(\"offset\") AS lo FROM tasks")
    assert result.columns == ["n", "lo"] and result.rows == [(6, 0)]
    assert run_query(store, "SELECT count(*) FROM events").rows == [(7,)]
    assert run_query(store, "SELECT error FROM tasks_dlq").rows == [("bad json",)]


def test_payload_is_queryable_json(store: ArchiveStore) -> None:
    result = run_query(store, "SELECT payload->>'$.task_id' AS t FROM tasks "
                              "WHERE correlation_id = 'run-2' ORDER BY t")
    assert result.rows == [("task-2",), ("task-5",)]


def test_bad_sql_raises_duckdb_error(store: ArchiveStore) -> None:
    with pytest.raises(duckdb.Error):
        run_query(store, "SELECT nope FROM tasks")


def test_missing_archive(tmp_path: Path) -> None:
    with pytest.raises(ArchiveMissing):
        run_query(ArchiveStore(tmp_path / "none"), "SELECT 1")


@pytest.mark.parametrize("sql", [
    "COPY (SELECT * FROM tasks) TO '{dir}/out.csv'", "COPY tasks TO '{root}/overwrite.parquet'",
    "ATTACH '{dir}/x.db'", "CREATE TABLE t AS SELECT 1", "INSTALL httpfs", "SELECT 1; COPY (SELECT 1) TO '{dir}/b.csv'",
])
def test_a_query_cannot_write_a_file(store: ArchiveStore, tmp_path_factory: pytest.TempPathFactory, sql: str) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    with pytest.raises(duckdb.PermissionException, match="read-only"):
        run_query(store, sql.format(dir=elsewhere, root=store.root))
    assert not list(elsewhere.iterdir())
    assert not (store.root / "overwrite.parquet").exists()


def test_a_query_cannot_read_a_file_outside_the_archive(store: ArchiveStore, tmp_path_factory: pytest.TempPathFactory
                                                        ) -> None:
    secret = tmp_path_factory.mktemp("secret") / "s.csv"
    secret.write_text("k\nvalue\n")
    with pytest.raises(duckdb.PermissionException):
        run_query(store, f"SELECT * FROM read_csv('{secret}')")
    assert run_query(store, "SELECT count(*) FROM tasks").rows == [(6,)]  # the archive still reads
