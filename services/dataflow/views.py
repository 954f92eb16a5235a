"""DuckDB views over dataset snapshots: `examples` (every row of every snapshot, with its
`snapshot_id`), `snapshots` (one row per manifest) and `snapshot_corrections` (one row per
failure whose oracle continuation a snapshot holds: its `failure_event_id`, episode and rows).
`flywheel sql` adds them next to the archive's topic views, so a row's lineage joins straight
to `events`."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import duckdb

__all__ = ["SNAPSHOT_VIEWS", "attach_snapshots"]

logger = logging.getLogger(__name__)

SNAPSHOT_VIEWS = ("examples", "snapshots", "snapshot_corrections")


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def attach_snapshots(con: duckdb.DuckDBPyConnection, root: Path) -> list[str]:
    """Creates the views when `root` holds snapshots; returns the view names created."""
    files = sorted(Path(root).glob("*/data.parquet")) if Path(root).exists() else []
    if not files:
        return []
    scan = ", ".join(_sql_string(str(f)) for f in files)
    con.execute(f"CREATE VIEW examples AS SELECT regexp_extract(filename, '([^/]+)/data.parquet$', 1)"
                f" AS snapshot_id, * EXCLUDE (filename) FROM read_parquet([{scan}], "
                f"filename = true, union_by_name = true)")
    manifests = []
    corrections = []
    for data in files:
        manifest_path = data.parent / "manifest.json"
        if manifest_path.exists():
            m = json.loads(manifest_path.read_text())
            fixes = m.get("corrections") or {}
            corrections.extend((m.get("snapshot_id", data.parent.name),
                                str(f.get("failure_event_id")), str(f.get("episode_id")),
                                int(f.get("rows", 0))) for f in fixes.get("failures", []))
            manifests.append((m.get("snapshot_id", data.parent.name), int(m.get("rows", 0)),
                              m.get("admission_policy", ""), json.dumps(m.get("counts", {})),
                              json.dumps(m.get("composition", {})),
                              json.dumps(m.get("files", {})), str(data.parent),
                              json.dumps(fixes)))
    con.execute("CREATE TABLE snapshots (snapshot_id VARCHAR, rows BIGINT, admission_policy "
                "VARCHAR, counts JSON, composition JSON, files JSON, path VARCHAR, "
                "corrections JSON)")
    if manifests:
        con.executemany("INSERT INTO snapshots VALUES (?, ?, ?, ?, ?, ?, ?, ?)", manifests)
    con.execute("CREATE TABLE snapshot_corrections (snapshot_id VARCHAR, failure_event_id "
                "VARCHAR, episode_id VARCHAR, rows BIGINT)")
    if corrections:
        con.executemany("INSERT INTO snapshot_corrections VALUES (?, ?, ?, ?)", corrections)
    return list(SNAPSHOT_VIEWS)
