"""The throughput benches cannot rot: each runs at a tiny size and leaves its JSON report with
every aim's ratio (the figures themselves are only meaningful at full size, on a quiet box)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.integration

TINY = {
    "bus": (["--events", "300", "--reps", "1"],
            {"typed producer", "typed batch consumer", "faust pass-through agent",
             "faust service shell", "archiver (to Parquet)"}),
    "loop": (["--examples", "10", "--reps", "1"], {"loop / in-process episodes/s"}),
    "loop through runners": (["--examples", "10", "--reps", "1", "--sim-devices", "1"],
                             {"loop through 1 sim phones / in-process episodes/s"}),
    "fold": (["--episodes", "12", "--blocks", "2", "--reps", "1"],
             {"curator first / last block", "verifier first / last block",
              "generator first / last block"}),
    "remote_rollout": (["--runners", "1", "--concurrency", "2", "--episodes", "1", "--reps", "1"],
                       {"through runners / in-process episodes/s"}),
}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("bench", sorted(TINY))
def test_each_throughput_bench_runs_tiny_and_reports_its_aims(bench: str, tmp_path: Path) -> None:
    args, aims = TINY[bench]
    script = bench.split()[0]  # "loop through runners" is bench/loop.py with --sim-devices
    out = tmp_path / f"{script}.json"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / f"{script}.py"), *args,
                           "--json", str(out)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=560, check=False)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    report = json.loads(out.read_text())
    assert report["bench"] == script and set(report["aims"]) == aims
    for name, aim in report["aims"].items():
        assert aim["ratio"] > 0 and aim["met"] == (aim["ratio"] >= aim["at_least"]), name
    assert report["runs"] and all(len(v) == 1 for v in report["runs"].values())


@pytest.mark.timeout(600)
def _on_tiny_model(tmp_path: Path, script: str, *args: str) -> dict:  # type: ignore[type-arg]
    """Runs bench/<script>.py on a tiny model built here, with `args`; its JSON report."""
    from trainer.models import build_tiny

    model = build_tiny(tmp_path / "tiny", seed=0)
    out = tmp_path / f"{script}.json"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / f"{script}.py"), "--model", str(model), *args,
                           "--json", str(out)], cwd=tmp_path, capture_output=True, text=True, timeout=560,
                          check=False)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return json.loads(out.read_text())


def test_the_decoding_bench_runs_tiny_and_reports_every_way(tmp_path: Path) -> None:
    report = _on_tiny_model(tmp_path, "prefix_cache", "--tasks", "2", "--max-steps", "2", "--max-new-tokens",
                            "16", "--reps", "1", "--batch-size", "2", "--dtype", "float32")
    assert report["bench"] == "prefix_cache" and set(report["aims"]) == {"lookup vs baseline"}
    assert len(report["runs"]) == 4
    lookup = report["answers_equal_baseline"]["one at a time, prompt cache + lookup drafts"]
    assert lookup.split("/")[0] == lookup.split("/")[1]  # float32: the same answers, text for text


@pytest.mark.timeout(600)
def test_the_evaluation_profile_runs_tiny_and_predicts_every_pass(tmp_path: Path) -> None:
    report = _on_tiny_model(tmp_path, "eval_profile", "--tasks", "1", "--max-steps", "2", "--max-new-tokens",
                            "8", "--reps", "1")
    assert report["bench"] == "eval_profile"
    assert set(report["aims"]) == {"micro-benchmark prediction / measured"}
    medians = report["medians"]
    assert medians["passes"] >= 2 and 0 < medians["forward_s"] <= medians["wall_s"]
    assert medians["predicted_s"] > 0 and report["grid"]
