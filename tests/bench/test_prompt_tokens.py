"""The prompt bench cannot rot: it counts every dev oracle step with a tiny model's tokenizer,
and its per-episode figures are consistent (a packed episode is never dearer than its steps
one by one)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_prompt_bench_counts_packed_and_unpacked_episodes(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT))
    from bench.prompt_tokens import measure
    from trainer.models import build_tiny, load_tokenizer

    result = measure(load_tokenizer(build_tiny(tmp_path / "tiny", seed=0)), "dev", 1, 0)
    table = result["prompt_tokens"]
    assert {"all", "tier/easy", "tier/hard", "tool"} <= set(table)
    assert result["answer_tokens_median"] > 0
    for key, row in table.items():
        assert 0 < row["median"] <= row["p90"] <= row["max"], key
        # every step's prompt once is at least the one packed sequence of the episode …
        assert row["unpacked_median"] >= row["episode_median"] > 0, key
    # … and dearer when episodes have several steps: the history is paid again at every step
    assert table["tier/hard"]["unpacked_median"] > 2 * table["tier/hard"]["episode_median"]
