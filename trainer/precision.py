"""Training precision: bf16 mixed precision (fp32 weights and optimiser, bf16 matmuls) where the
hardware multiplies bf16 natively, fp32 elsewhere.

A GPU with bf16 and a CPU with `avx512_bf16` or `amx_bf16` (Zen 4+, Sapphire Rapids+) run a
SmolLM2-135M training step about twice as fast under bf16 autocast as in fp32 (measured in
`bench/train.py --precision-steps`); on a CPU without them bf16 is emulated and slower, so `auto`
keeps fp32 there. The weights and the optimiser stay fp32 either way: only the matmuls drop to bf16.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

__all__ = ["PRECISIONS", "Precision", "cpu_has_bf16", "use_bf16"]

Precision = Literal["auto", "bf16", "fp32"]
PRECISIONS: tuple[str, ...] = ("auto", "bf16", "fp32")
_BF16_FLAGS = ("avx512_bf16", "amx_bf16")


@cache
def cpu_has_bf16(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether this CPU multiplies bf16 natively (its flags name avx512_bf16 or amx_bf16)."""
    try:
        text = Path(cpuinfo).read_text()
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            return any(flag in flags for flag in _BF16_FLAGS)
    return False


def use_bf16(precision: str, *, cuda: bool, cpu_bf16: bool | None = None) -> bool:
    """Whether training runs under bf16 autocast for `precision` ("auto", "bf16" or "fp32")."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    if precision != "auto":
        return precision == "bf16"
    return cuda or (cpu_has_bf16() if cpu_bf16 is None else cpu_bf16)
