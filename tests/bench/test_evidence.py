"""The GPU evidence script cannot rot: `SCALE=smoke bench/evidence.sh OUT tiny` runs every stage
(SFT throughput, base → SFT with recovery rows → corrections → GRPO+CARE on learnable tasks → ablation, a
harness round) on the tiny model and leaves each stage's JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(900)
def test_the_evidence_script_runs_every_stage_on_the_tiny_model(tmp_path: Path) -> None:
    env = {**os.environ, "SCALE": "smoke", "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "TRAIN_BENCH_S": "300", "LEARN_BENCH_S": "420", "COEVOLVE_BENCH_S": "300"}
    done = subprocess.run(["bash", str(ROOT / "bench" / "evidence.sh"), str(tmp_path), "tiny"], cwd=ROOT, env=env, check=False,
                          capture_output=True, text=True, timeout=880)
    log = done.stdout + done.stderr
    for stage in ("train", "learn", "coevolve"):
        assert f"{stage} bench exit 0" in log, log[-3000:]
    learn = json.loads((tmp_path / "learn" / "learn.json").read_text())
    labels = {(r["label"], r["split"]) for r in learn["results"]}
    assert {("zero", "dev"), ("sft", "dev"), ("sft", "test"), ("corrections", "dev"), ("rl", "dev"),
            ("rl-nocare", "dev")} <= labels
    corrections = json.loads((tmp_path / "learn" / "corrections_result.json").read_text())
    assert corrections["correction_rows"] > 0 and 0 < corrections["correction_share"] <= 1
    assert all("next_action" in r for r in learn["results"] if r["label"] in ("zero", "sft"))
    rl = json.loads((tmp_path / "learn" / "rl" / "rl_metrics.json").read_text())
    assert "dropped_groups" in rl and rl["groups"] >= 1
    assert json.loads((tmp_path / "learn" / "snapshot" / "manifest.json").read_text())["recovery_rows"] > 0
    assert list((tmp_path / "coevolve").rglob("rounds.parquet"))
