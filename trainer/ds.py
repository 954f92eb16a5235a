"""DeepSpeed ZeRO-2/3 configs shipped with the trainer: where they are, their auto values filled and checked.

The same JSON files serve a multi-GPU launch (`accelerate launch --use_deepspeed` or
`deepspeed`) and a single-process CPU run; TRL/transformers fill the "auto" values from the
training arguments. `filled_config` does that filling without training, and `validate` checks
the result with DeepSpeed's own config models.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any, Literal

__all__ = ["CONFIG_DIR", "config_path", "filled_config", "single_process_env", "validate"]

logger = logging.getLogger(__name__)

CONFIG_DIR = Path(__file__).parent / "deepspeed"
# What torch.distributed needs to start a world of one process (DeepSpeed always initialises it).
_SINGLE_PROCESS = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29517", "RANK": "0", "LOCAL_RANK": "0",
                   "WORLD_SIZE": "1"}


def config_path(stage: Literal[2, 3]) -> Path:
    """The shipped ZeRO-`stage` config."""
    path = CONFIG_DIR / f"zero{stage}.json"
    if not path.is_file():
        raise FileNotFoundError(f"no DeepSpeed config for ZeRO-{stage}; ship {path}")
    return path


def single_process_env(port: int | None = None) -> dict[str, str]:
    """Sets (and returns) the variables a one-process DeepSpeed run needs, keeping ones already set."""
    values = dict(_SINGLE_PROCESS, **({"MASTER_PORT": str(port)} if port else {}))
    for key, value in values.items():
        os.environ.setdefault(key, value)
    return {key: os.environ[key] for key in values}


def filled_config(path: str | Path, args: Any, model: Any, num_training_steps: int) -> dict[str, Any]:
    """The config at `path` with every "auto" value filled from training `args` and `model`, as transformers does."""
    from transformers.integrations.deepspeed import HfTrainerDeepSpeedConfig

    config = HfTrainerDeepSpeedConfig(str(path))
    config.trainer_config_process(args)
    config.trainer_config_finalize(args, model, num_training_steps)
    return config.config


def _autos(value: Any, where: str = "") -> list[str]:
    if isinstance(value, dict):
        return [hit for key, item in value.items() for hit in _autos(item, f"{where}.{key}" if where else key)]
    return [where] if value == "auto" else []


def validate(config: dict[str, Any], world_size: int = 1) -> None:
    """Raises ValueError naming the first problem: an unfilled auto, bad batch arithmetic, a bad ZeRO section."""
    from deepspeed.runtime.zero.config import DeepSpeedZeroConfig

    left = _autos(config)
    if left:
        raise ValueError(f"DeepSpeed config still has auto values at {', '.join(left)}")
    micro, accum = config["train_micro_batch_size_per_gpu"], config["gradient_accumulation_steps"]
    if config["train_batch_size"] != micro * accum * world_size:
        raise ValueError(f"train_batch_size {config['train_batch_size']} != micro {micro} × accumulation {accum} "
                         f"× world {world_size}")
    DeepSpeedZeroConfig(**config["zero_optimization"])
    logger.info("DeepSpeed config valid: ZeRO-%s", config["zero_optimization"]["stage"])


def load(path: str | Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text())


def smoke(model_dir: str | Path, snapshot_dir: str | Path, out_dir: str | Path, *, steps: int = 3) -> dict[str, Any]:
    """`steps` single-process steps of SFT and of GRPO with each shipped config; returns what each did.

    Run it in a process of its own (`python -m trainer.ds MODEL SNAPSHOT OUT`): DeepSpeed
    initialises torch.distributed and accelerate's process state for the whole process.
    """
    from devices.suite.instances import generate_split
    from trainer.rl import RlConfig, run_grpo
    from trainer.sft import SftConfig, run_sft

    single_process_env()
    tasks = [t for t in generate_split("train", 1, 0)][:2]
    report: dict[str, Any] = {}
    for stage in (2, 3):
        path = str(config_path(stage))
        sft = run_sft(model_dir, snapshot_dir, Path(out_dir) / f"sft-z{stage}",
                      SftConfig(max_steps=steps, batch_size=2, learning_rate=1e-3, deepspeed=path))
        rl = run_grpo(model_dir, tasks, Path(out_dir) / f"rl-z{stage}",
                      RlConfig(max_steps=steps, num_generations=2, max_completion_length=16, max_tool_calls=1,
                               deepspeed=path))
        report[f"zero{stage}"] = {"sft_steps": sft.steps, "sft_losses": sft.losses, "sft_dir": str(sft.checkpoint_dir),
                                  "sft_zero_stage": sft.metrics["zero_stage"], "rl_steps": rl.steps,
                                  "rl_dir": str(rl.checkpoint_dir), "rl_zero_stage": rl.metrics["zero_stage"]}
    return report


if __name__ == "__main__":
    import sys

    print(json.dumps(smoke(sys.argv[1], sys.argv[2], sys.argv[3])))
