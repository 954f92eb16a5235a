"""The shipped DeepSpeed ZeRO-2/3 configs: auto values filled and valid; 3 single-process CPU steps of SFT and GRPO each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from safetensors.torch import load_file

from trainer.ds import config_path, filled_config, load, validate
from trainer.models import load_model

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("stage", [2, 3])
def test_configs_fill_their_auto_values_and_validate(stage: int, tiny_model: Path, tmp_path: Path) -> None:
    from trl import SFTConfig

    args = SFTConfig(output_dir=str(tmp_path), use_cpu=True, per_device_train_batch_size=2,
                     gradient_accumulation_steps=3, report_to="none")
    config = filled_config(config_path(stage), args, load_model(tiny_model).model, num_training_steps=3)
    validate(config)
    assert config["train_batch_size"] == 6 and config["zero_optimization"]["stage"] == stage
    assert isinstance(config["zero_optimization"]["reduce_bucket_size"], int)


def test_validate_refuses_unfilled_and_inconsistent_configs() -> None:
    raw = load(config_path(2))
    with pytest.raises(ValueError, match="auto values at train_batch_size"):
        validate(raw)
    filled = {**raw, "train_batch_size": 5, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 2,
              "gradient_clipping": 1.0, "bf16": {"enabled": False}, "fp16": {"enabled": False},
              "zero_optimization": {**raw["zero_optimization"], "reduce_bucket_size": 1000}}
    with pytest.raises(ValueError, match="train_batch_size 5"):
        validate(filled)
    with pytest.raises(Exception, match="stage"):
        validate({**filled, "train_batch_size": 4, "zero_optimization": {"stage": 7}})


def test_three_cpu_steps_of_sft_and_grpo_with_each_config(tiny_model: Path, oracle_snapshot: Path,
                                                          tmp_path: Path) -> None:
    from streams.broker import free_port

    # A free port, not a fixed one: two suites on one machine (or a lingering socket) never collide.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TRL_EXPERIMENTAL_SILENCE": "1", "MASTER_PORT": str(free_port())}
    done = subprocess.run([sys.executable, "-m", "trainer.ds", str(tiny_model), str(oracle_snapshot), str(tmp_path)],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=540, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    base = load_file(str(tiny_model / "model.safetensors"))
    for stage in (2, 3):
        run = report[f"zero{stage}"]
        assert run["sft_steps"] == 3 and run["rl_steps"] == 3
        assert run["sft_zero_stage"] == stage and run["rl_zero_stage"] == stage  # DeepSpeed really ran
        saved = load_file(str(Path(run["sft_dir"]) / "model.safetensors"))
        assert all(saved[k].shape == v.shape for k, v in base.items())  # ZeRO-3 partitions were gathered
        assert any(not (saved[k] == base[k]).all() for k in base)
