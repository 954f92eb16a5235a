"""`flywheel audit CHECKPOINT`: the chain down to the base model, the snapshot's sha256 checked
against training time, rows per slice, and no dev or test row; a changed snapshot or a held-out
row fails the audit (exit 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from services.cli.main import app
from trainer.data import build_oracle_snapshot, read_snapshot
from trainer.sft import write_checkpoint_meta

runner = CliRunner()


@pytest.fixture
def trained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("FLYWHEEL_DATA_DIR", str(tmp_path))
    snapshot = build_oracle_snapshot(tmp_path / "snapshots" / "snap-a", templates=["star_relation", "text_relation"],
                                     n_per_template=1, snapshot_id="snap-a")
    sft, rl = tmp_path / "checkpoints" / "run-a" / "gen1", tmp_path / "checkpoints" / "run-a" / "gen2"
    for folder in (sft, rl):
        folder.mkdir(parents=True)
    write_checkpoint_meta(sft, checkpoint_id="sft-1", run_id="run-a", stage="sft", step=3, snapshot_id="snap-a",
                          snapshot_sha256=read_snapshot(snapshot).sha256, base_model="tiny-qwen2",
                          parent=str(tmp_path / "base"))
    write_checkpoint_meta(rl, checkpoint_id="rl-2", run_id="run-a", stage="rl", step=1, snapshot_id="online",
                          snapshot_sha256=None, base_model="sft-1", parent=str(sft))
    return rl, snapshot


def test_the_audit_walks_to_the_snapshot_and_checks_it(trained: tuple[Path, Path]) -> None:
    rl, _ = trained
    result = runner.invoke(app, ["audit", str(rl), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["chain"] == ["rl-2", "sft-1"] and report["base_model"] == "tiny-qwen2"
    assert [s["snapshot_id"] for s in report["snapshots"]] == ["snap-a"]
    assert report["snapshots"][0]["sha256_matches"] and report["held_out_rows"] == []
    assert {s["template"] for s in report["slices"]} == {"star_relation", "text_relation"}
    assert sum(s["rows"] for s in report["slices"]) == report["rows"] > 0
    table = runner.invoke(app, ["audit", str(rl)])
    assert table.exit_code == 0 and "sha256 matches" in table.output
    assert "no dev or test instance reached training" in " ".join(table.output.split())


def test_a_changed_snapshot_or_a_held_out_row_fails_the_audit(trained: tuple[Path, Path]) -> None:
    rl, snapshot = trained
    data = snapshot / "data.parquet"
    table = pq.read_table(data)
    rows = table.to_pylist()
    rows[0]["split"], rows[0]["task_id"] = "test", rows[0]["task_id"].replace("-train-", "-test-")
    pq.write_table(table.from_pylist(rows, schema=table.schema), data)
    result = runner.invoke(app, ["audit", str(rl), "--json"])
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert not report["snapshots"][0]["sha256_matches"]
    assert len(report["held_out_rows"]) == 1 and "is a test instance" in report["held_out_rows"][0]


def test_a_folder_that_is_no_checkpoint_is_one_sentence(tmp_path: Path) -> None:
    result = runner.invoke(app, ["audit", str(tmp_path)])
    assert result.exit_code == 1 and "has no flywheel_checkpoint.json" in " ".join(result.output.split())
    assert "Traceback" not in result.output
