"""SFT scores only the answer positions on a CPU, with the same loss as scoring every position."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from trainer.answer_positions import every_position, score_answer_positions, scoring_answers_only
from trainer.sft import SftConfig, build_sft_trainer


def _lm_head_rows(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Records how many positions each call of TRL's fused LM head projects onto the vocabulary."""
    from trl.trainer import utils

    rows: list[int] = []
    real = utils._ChunkedLogProbFunction.apply

    def counting(hidden, *args):
        rows.append(int(hidden.shape[0]))
        return real(hidden, *args)

    monkeypatch.setattr(utils._ChunkedLogProbFunction, "apply", counting)
    return rows


def _loss(trainer, batch) -> float:
    with torch.no_grad():
        return float(trainer.compute_loss(trainer.model, dict(batch)))


def test_the_lm_head_runs_on_answer_positions_only_with_the_same_loss(
        tiny_model: Path, oracle_snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trainer, _, _ = build_sft_trainer(tiny_model, oracle_snapshot, tmp_path, SftConfig(max_steps=1, precision="fp32"))
    assert scoring_answers_only()
    batch = trainer.data_collator([trainer.train_dataset[0]])
    labelled = int((batch["labels"][:, 1:] != -100).sum())
    positions = int(batch["labels"].shape[1]) - 1
    assert 0 < labelled < positions  # the prompt carries no label

    rows = _lm_head_rows(monkeypatch)
    compact = _loss(trainer, batch)
    with every_position():
        assert not scoring_answers_only()
        assert not score_answer_positions()  # training inside the block (a bench's baseline) stays on every position
        assert not scoring_answers_only()
        full = _loss(trainer, batch)
    assert scoring_answers_only()  # the block puts the switch back
    assert rows == [labelled, positions]  # answers only, then TRL's own every-position path
    assert compact == pytest.approx(full, rel=1e-5)  # the same sum over the same positions


def test_the_switch_is_idempotent() -> None:
    assert score_answer_positions() and score_answer_positions()
    from trl.trainer import utils

    assert not getattr(utils._use_triton.original, "_flywheel_answer_positions", False)  # not wrapped twice
