"""`flywheel run --examples N` on a fresh data dir: the whole data flywheel runs, stops by
itself at a snapshot of N approved examples, and every row traces back to archived events."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from services.archiver.store import ArchiveStore
from streams.broker import free_port

pytestmark = pytest.mark.integration

#: Guards against hangs only; not a speed assertion (bench/loop.py measures speed).
WAIT_S = 300
EXAMPLES = 80


def test_run_examples_leaves_a_traceable_train_only_snapshot(tmp_path: Path) -> None:
    data_dir = tmp_path / "var"
    env = {k: v for k, v in os.environ.items() if k != "KAFKA_BOOTSTRAP_SERVERS"}
    env.update({"FLYWHEEL_DATA_DIR": str(data_dir), "FLYWHEEL_BROKER_PORT": str(free_port()),
                "FLYWHEEL_ARCHIVER_FLUSH_INTERVAL_S": "0.5", "COLUMNS": "250",
                "PYTHONPATH": str(Path.cwd())})
    result = subprocess.run([sys.executable, "-m", "services.cli.main", "run", "--examples",
                             str(EXAMPLES), "--sim-devices", "0"], env=env, capture_output=True,
                            text=True, timeout=WAIT_S, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert f"flywheel run ({EXAMPLES} examples)" in output
    assert "approved examples" in output and "snapshot" in output
    snapshots = sorted((data_dir / "snapshots").glob("*/data.parquet"))
    assert len(snapshots) == 1, output
    assert snapshots[0].parent.name in output  # the summary names the snapshot
    rows = pq.read_table(snapshots[0]).to_pylist()
    assert len(rows) >= EXAMPLES
    assert {r["split"] for r in rows} == {"train"}
    manifest = json.loads((snapshots[0].parent / "manifest.json").read_text())
    assert manifest["rows"] == len(rows)
    assert manifest["admission_policy"].startswith("automatic stand-in")
    # Every row's task, episode, verdict and decision event is in the archive.
    archived = ArchiveStore(data_dir / "archive").event_ids()
    for what in ("task", "episode", "verdict", "decision"):
        missing = {r[f"{what}_event_id"] for r in rows} - archived
        assert not missing, f"{len(missing)} {what} events of the snapshot are not archived"
    # … at the topic/partition/offset the row names.
    con = duckdb.connect()
    files = [str(p) for p in ArchiveStore(data_dir / "archive").files()]
    found = con.execute(
        "SELECT count(*) FROM read_parquet(?, hive_partitioning=true) a JOIN "
        "(SELECT unnest(?) AS id, unnest(?) AS part, unnest(?) AS off) r "
        "ON a.event_id = r.id AND a.partition = r.part AND a.offset = r.off",
        [files, [r["episode_event_id"] for r in rows], [r["episode_partition"] for r in rows],
         [r["episode_offset"] for r in rows]]).fetchone()[0]
    assert found == len(rows)
