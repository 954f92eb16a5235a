"""Oracle snapshots: a tier or template filter, recovery rows after a slip, and snapshot filtering."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from devices.harness.answer import InvalidAction, parse_completion
from devices.suite.registry import get_template
from trainer.data import SnapshotError, build_oracle_snapshot, filter_snapshot, read_snapshot


def test_a_tier_filter_keeps_only_that_tiers_templates(tmp_path: Path) -> None:
    table = read_snapshot(build_oracle_snapshot(tmp_path / "s", tiers=["easy"])).table
    assert table.num_rows > 0 and {get_template(t).tier for t in table.column("template").to_pylist()} == {"easy"}
    assert set(table.column("tier").to_pylist()) == {"easy"}
    with pytest.raises(SnapshotError, match="no train template"):
        build_oracle_snapshot(tmp_path / "none", templates=["star_relation"], tiers=["no-such-tier"])


def test_recovery_rows_show_the_error_then_the_oracles_way_on(tmp_path: Path) -> None:
    plain = read_snapshot(build_oracle_snapshot(tmp_path / "p", tiers=["easy"])).table.to_pylist()
    rows = read_snapshot(build_oracle_snapshot(tmp_path / "r", tiers=["easy"], recovery=1.0)).table.to_pylist()
    assert not any(r["recovery"] for r in plain)
    after = [r for r in rows if r["recovery"]]
    assert len(after) >= len(rows) // 3
    for row in after:
        history = json.loads(row["prompt"])
        assert any(m["role"] == "tool" and m["content"].startswith("error ") for m in history)
    # the slip is never a target: every completion is one of the oracle's own actions
    oracle = {(r["task_id"], r["completion"]) for r in plain}
    assert all((r["task_id"], r["completion"]) in oracle for r in rows)
    assert json.loads((tmp_path / "r" / "manifest.json").read_text())["recovery_rows"] == len(after)
    assert not any(isinstance(parse_completion(r["completion"]), InvalidAction) for r in rows)


def test_filtering_a_snapshot_keeps_its_lineage(tmp_path: Path) -> None:
    source = build_oracle_snapshot(tmp_path / "s", templates=["star_relation", "text_relation"], snapshot_id="src")
    kept = read_snapshot(filter_snapshot(source, tmp_path / "f", templates=["text_relation"]))
    assert set(kept.table.column("template").to_pylist()) == {"text_relation"}
    manifest = json.loads((tmp_path / "f" / "manifest.json").read_text())
    assert manifest["source_snapshot"] == "src" and manifest["source_sha256"] == read_snapshot(source).sha256
    with pytest.raises(SnapshotError, match="no row"):
        filter_snapshot(source, tmp_path / "g", templates=["nope"])
