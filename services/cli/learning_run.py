"""What `flywheel run` does by default (without `--quick`): a run that shows the model learning.

The data phase draws easy-tier templates only (canonical goals, no composition), until
LEARNING_EXAMPLES approved rows are in a snapshot; the trainer then scores SmolLM2-135M as it
comes (generation 0), trains it with SFT on that snapshot, and scores it again on the same 40 dev
and 40 test episodes (trainer.loop.LEARNING_DEFAULTS), so the run ends with base vs trained and
their 95% intervals. Before any of it starts, `learning_forecast` says how long the run is
expected to take on this machine, and says so plainly when that is beyond the half hour aimed at.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["AIM_MINUTES", "LEARNING_EXAMPLES", "expected_minutes", "learning_data_env", "learning_forecast"]

#: Approved rows the default run waits for: about six oracle episodes per easy train template
#: (39 templates, ~3 rows each with `finish`), the amount bench/results/smollm2-cpu-easy-n6 trained on.
LEARNING_EXAMPLES = 700
#: The run's aim on a fresh 2-core machine.
AIM_MINUTES = 30.0
#: The default run measured end to end on an idle 2-core machine (no GPU), and on how many cores
#: (2026-12-06, 1,960 s: the data phase and SmolLM2's conversion beside the base model's scoring,
#: 3 min + its next action 1, SFT of 251 packed episodes 18.6, the trained model's next action 2 and
#: scoring 6, report and shutdown 1.5; two and a half minutes over the half hour, so the run says so).
MEASURED_MINUTES, MEASURED_CORES = 32.7, 2
#: The same run on an idle 2-core CPU without native bf16 (AVX2 only, so SFT and scoring in fp32),
#: 2026-12-06, 5,285 s: dev 0.000 -> 0.153 [0.051, 0.278], test 0.000 -> 0.114 [0.033, 0.206].
MEASURED_FP32_MINUTES = 88.1
#: Where a GPU trains, the run is bound by the data phase and start-up.
GPU_MINUTES = 6.0


def learning_data_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The generator settings of the default run, unless the environment sets them itself."""
    environ = os.environ if environ is None else environ
    wanted = {"FLYWHEEL_GENERATOR_TIERS": "easy", "FLYWHEEL_GENERATOR_REPHRASE_EVERY": "0"}
    return {key: value for key, value in wanted.items() if key not in environ}


def _gpu(gpu: bool | None) -> bool:
    if gpu is not None:
        return gpu
    import torch

    return torch.cuda.is_available()


def expected_minutes(cores: int | None = None, gpu: bool | None = None, bf16: bool | None = None) -> float:
    """The default run's expected minutes here: a few where a GPU trains, else scaled from the
    measured run by the core count (the CPU work is matrix products that use every core; at
    most 8 are counted)."""
    if _gpu(gpu):
        return GPU_MINUTES
    if bf16 is None:
        from trainer.precision import cpu_has_bf16

        bf16 = cpu_has_bf16()
    measured = MEASURED_MINUTES if bf16 else MEASURED_FP32_MINUTES
    return measured * MEASURED_CORES / max(1, min(8, cores or os.cpu_count() or 1))


def learning_forecast(base_model: str, config: Any, examples: int, *, cores: int | None = None,
                      gpu: bool | None = None, bf16: bool | None = None) -> str:
    """One sentence before the run starts: what it trains, on what, and how long it should take."""
    gpu, cores = _gpu(gpu), cores or os.cpu_count() or 1
    minutes = expected_minutes(cores, gpu, bf16)
    where = "on this machine's GPU" if gpu else f"on this machine's {cores} CPU core(s)"
    what = (f"{base_model} on {examples:,} {config.tiers or 'all'}-tier rows, scored before and after on "
            f"{config.eval_limit or 'all'} {' and '.join(config.split_list)} episodes each")
    if minutes > AIM_MINUTES:
        return (f"this run trains {what}; expect about {minutes:.0f} minutes {where}, more than the "
                f"{AIM_MINUTES:.0f} minutes aimed at (`--quick` runs the tiny model in minutes)")
    return f"this run trains {what}; expect about {minutes:.0f} minutes {where} (`--quick`: the tiny model, minutes)"
