"""`flywheel sql "SELECT ..."`: DuckDB over the event archive, one view per topic plus `events`."""

from __future__ import annotations

import csv
import json
import logging
import sys
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

import duckdb
import typer
from rich.console import Console
from rich.table import Table

from services.archiver.query import run_query, view_name
from services.archiver.store import ArchiveMissing
from services.cli.archive_cmd import ArchiveOption, fail, open_store

__all__ = ["register", "render_value"]

logger = logging.getLogger(__name__)

console = Console()

#: Longest cell text in the rich table; whole payloads would drown the terminal (use --json).
MAX_CELL_CHARS = 120


def render_value(value: Any) -> Any:
    """A JSON-friendly form of a DuckDB value (bytes as escaped text, times as ISO 8601)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "backslashreplace")
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, list | tuple):
        return [render_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): render_value(v) for k, v in value.items()}
    return value


def _cell(value: Any) -> str:
    if value is None:
        return "[dim]NULL[/]"
    text = value if isinstance(value, str) else json.dumps(render_value(value), default=str)
    text = text.replace("[", r"\[")
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 1] + "…"


def sql(
    query: Annotated[str, typer.Argument(
        help="SQL over the views: events, tasks, episodes, … (a topic's last dotted part), "
             "<name>_dlq for dead letters, and examples / snapshots (dataset snapshots).")],
    archive: ArchiveOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print rows as a JSON array.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print rows as CSV with a header.")] = False,
) -> None:
    """Run DuckDB SQL over the Parquet event archive."""
    if as_json and as_csv:
        fail("--json and --csv cannot be used together; pick one output format")
    store = open_store(archive)
    try:
        result = run_query(store, query, snapshots=_snapshot_dir(), readable=_readable(store))
    except ArchiveMissing as error:
        fail(str(error))
    except duckdb.Error as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        views = ", ".join(["events", *sorted({view_name(t) for t in store.topics()})])
        fail(f"the query failed: {first} (views: {views})")
    if as_json:
        rows = [dict(zip(result.columns, map(render_value, row), strict=True))
                for row in result.rows]
        sys.stdout.write(json.dumps(rows, default=str, ensure_ascii=False) + "\n")
        return
    if as_csv:
        writer = csv.writer(sys.stdout)
        writer.writerow(result.columns)
        for row in result.rows:
            writer.writerow(["" if v is None else render_value(v) for v in row])
        return
    table = Table(*result.columns, caption=f"{len(result.rows):,} row(s)")
    for row in result.rows:
        table.add_row(*(_cell(v) for v in row))
    console.print(table)


def _readable(store: Any) -> list[Path]:
    """Folders a query may read beyond the archive: the data dir (rounds tables, reports) and
    the folder that holds the archive."""
    from streams.settings import load_bus_settings

    return [Path(load_bus_settings().data_dir), Path(store.root).parent]


def _snapshot_dir() -> Path | None:
    """The curator's snapshot folder (FLYWHEEL_CURATOR_SNAPSHOT_DIR or <data dir>/snapshots)."""
    from services.curator.settings import load_curator_settings
    from streams.settings import load_bus_settings

    try:
        return load_curator_settings().resolved_snapshot_dir(Path(load_bus_settings().data_dir))
    except ValueError as error:
        fail(str(error))


def register(app: typer.Typer) -> None:
    app.command("sql")(sql)
