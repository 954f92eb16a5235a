"""`flywheel sql` and `flywheel archive stats` over a real Parquet archive."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from services.archiver.rows import new_rows, to_table
from services.archiver.store import ArchiveStore
from services.cli.main import app
from tests.services.archiver.helpers import record_of, task

runner = CliRunner()


@pytest.fixture()
def archive(tmp_path: Path) -> Path:
    store = ArchiveStore(tmp_path / "archive")
    store.write(to_table(new_rows([record_of(task(i), offset=i) for i in range(4)], set()), 1))
    return store.root


def test_sql_json_output(archive: Path) -> None:
    result = runner.invoke(app, ["sql", "--archive", str(archive), "--json",
                                 "SELECT event_id, occurred_at, key FROM tasks ORDER BY event_id"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["event_id"] for r in rows] == [f"ev{i:08d}" for i in range(4)]
    assert rows[0]["occurred_at"].startswith("2024-05-01T12:00:00")
    assert rows[0]["key"] == "task-0"


def test_sql_csv_output(archive: Path) -> None:
    result = runner.invoke(app, ["sql", "--archive", str(archive), "--csv",
                                 "SELECT type, count(*) AS n FROM events GROUP BY type"])
    assert result.exit_code == 0, result.output
    assert list(csv.reader(io.StringIO(result.stdout))) == [["type", "n"], ["task.proposed", "4"]]


def test_sql_table_output(archive: Path) -> None:
    result = runner.invoke(app, ["sql", "--archive", str(archive),
                                 "SELECT count(*) AS how_many FROM tasks"])
    assert result.exit_code == 0, result.output
    assert "how_many" in result.stdout and "4" in result.stdout


def test_sql_error_is_one_sentence_naming_views(archive: Path) -> None:
    result = runner.invoke(app, ["sql", "--archive", str(archive), "SELECT * FROM nope"])
    assert result.exit_code == 1
    assert "the query failed" in result.output and "views: events, tasks" in result.output
    assert "Traceback" not in result.output


def test_sql_missing_archive(tmp_path: Path) -> None:
    result = runner.invoke(app, ["sql", "--archive", str(tmp_path / "none"), "SELECT 1"])
    assert result.exit_code == 1 and "no event archive at" in result.output


def test_archive_stats(archive: Path) -> None:
    result = runner.invoke(app, ["archive", "stats", "--archive", str(archive)])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if "flywheel.tasks" in x)
    assert "yes" in line and " 4 " in line
