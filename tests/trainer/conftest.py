"""Trainer fixtures: a tiny Qwen2-style model with a locally trained tokenizer, and a small oracle snapshot."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

# Tests of models and training need the 'train' extra (torch, transformers, trl); without it they are not
# collected (CARE and the prompt format are pure Python and always run).
if importlib.util.find_spec("trl") is None:
    collect_ignore_glob = ["test_[!cp]*.py", "test_policy.py"]
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A freshly built tiny model directory (seconds; nothing is downloaded)."""
    from trainer.models import build_tiny

    return build_tiny(tmp_path_factory.mktemp("tiny") / "model", seed=0)


@pytest.fixture(scope="session")
def oracle_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A curator-shaped snapshot (data.parquet + manifest.json) from oracle episodes of three templates."""
    from trainer.data import build_oracle_snapshot

    return build_oracle_snapshot(tmp_path_factory.mktemp("snapshot") / "snap-test",
                                 templates=["star_relation", "text_relation", "new_number_relation"],
                                 n_per_template=1, snapshot_id="snap-test")


def tool_call_bias(tokenizer, text: str) -> dict[tuple[int, ...], float]:
    """GenerationConfig.sequence_bias that makes any model write `text` then stop: each token is
    biased after the exact prefix of `text` before it, longer prefixes more strongly."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    return {tuple(ids[:k]): 20.0 * k for k in range(1, len(ids) + 1)}
