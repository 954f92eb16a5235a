"""Training precision: bf16 mixed precision only where the hardware multiplies bf16 natively."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainer.precision import cpu_has_bf16, use_bf16


def _cpuinfo(tmp_path: Path, flags: str) -> str:
    path = tmp_path / "cpuinfo"
    path.write_text(f"processor\t: 0\nmodel name\t: test\nflags\t\t: fpu sse2 avx2 {flags}\n\n")
    return str(path)


def test_a_cpu_with_native_bf16_is_recognised_and_one_without_is_not(tmp_path: Path) -> None:
    assert cpu_has_bf16(_cpuinfo(tmp_path, "avx512f avx512_bf16"))
    (tmp_path / "amx").mkdir()
    assert cpu_has_bf16(_cpuinfo(tmp_path / "amx", "amx_tile amx_bf16"))
    (tmp_path / "old").mkdir()
    assert not cpu_has_bf16(_cpuinfo(tmp_path / "old", "avx512f avx512bw"))  # bf16 would be emulated: slower
    assert not cpu_has_bf16(str(tmp_path / "missing"))


def test_auto_follows_the_hardware_and_explicit_choices_win() -> None:
    assert use_bf16("auto", cuda=True, cpu_bf16=False)
    assert use_bf16("auto", cuda=False, cpu_bf16=True)
    assert not use_bf16("auto", cuda=False, cpu_bf16=False)
    assert use_bf16("bf16", cuda=False, cpu_bf16=False)
    assert not use_bf16("fp32", cuda=True, cpu_bf16=True)


def test_an_unknown_precision_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="precision must be one of auto, bf16, fp32"):
        use_bf16("fp16", cuda=False)
