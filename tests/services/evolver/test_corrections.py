"""Corrections join the next snapshot at the configured share."""

from __future__ import annotations

import pyarrow as pa
import pytest

from services.dataflow.corrections import corrections_needed, mix_corrections


def table(prefix: str, n: int) -> pa.Table:
    return pa.table({"prompt": [f"{prefix}{i}" for i in range(n)],
                     "target": [f"a{i}" for i in range(n)]})


def test_corrections_make_up_the_share() -> None:
    mixed, report = mix_corrections(table("e", 80), table("c", 100), 0.2, seed=1)
    assert report.corrections_used == 20 and report.share == pytest.approx(0.2)
    assert mixed.num_rows == 100
    assert mixed.column("origin").to_pylist().count("correction") == 20
    chosen = [p for p, o in zip(mixed.column("prompt").to_pylist(),
                                mixed.column("origin").to_pylist(), strict=True) if o == "correction"]
    assert all(p.startswith("c") for p in chosen) and len(set(chosen)) == 20
    again, _ = mix_corrections(table("e", 80), table("c", 100), 0.2, seed=1)
    assert again.equals(mixed)  # seeded
    other, _ = mix_corrections(table("e", 80), table("c", 100), 0.2, seed=2)
    assert not other.equals(mixed)


def test_too_few_corrections_are_all_used_and_the_share_is_reported() -> None:
    mixed, report = mix_corrections(table("e", 80), table("c", 5), 0.2)
    assert report.corrections_used == 5 and report.share == pytest.approx(5 / 85)
    assert mixed.num_rows == 85


def test_bad_shares_and_schemas_are_refused() -> None:
    assert corrections_needed(100, 0.0) == 0
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        corrections_needed(100, 1.0)
    with pytest.raises(ValueError, match="differ in columns"):
        mix_corrections(table("e", 3), pa.table({"prompt": ["x"]}), 0.5)
