"""`flywheel train snapshot`: an oracle snapshot of a template list, with and without recovery rows."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
from typer.testing import CliRunner

from services.cli.main import app

runner = CliRunner()
TEMPLATES = ["text_relation", "star_relation", "email_relation"]


def _snapshot(out: Path, *extra: str) -> list[dict]:
    args = ["train", "snapshot", "--out", str(out), *[f"--template={t}" for t in TEMPLATES], *extra]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "recovery rows" in result.output
    return pq.read_table(out / "data.parquet").to_pylist()


def test_recovery_share_adds_rows_that_show_an_error_and_the_way_on(tmp_path: Path) -> None:
    plain = _snapshot(tmp_path / "plain")
    slipped = _snapshot(tmp_path / "slipped", "--recovery", "1")
    assert not any(r["recovery"] for r in plain)
    after = [r for r in slipped if r["recovery"]]
    assert after and all("error" in r["prompt"] for r in after)
    # The slip is never a row: the same oracle actions are taught either way.
    assert sorted(r["completion"] for r in slipped) == sorted(r["completion"] for r in plain)


def test_a_share_above_one_is_refused_by_name(tmp_path: Path) -> None:
    result = runner.invoke(app, ["train", "snapshot", "--out", str(tmp_path), "--recovery", "2"])
    assert result.exit_code != 0 and "--recovery" in result.output
