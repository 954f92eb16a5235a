"""SFT scores the answer tokens only, on every device: the LM head runs on the positions that carry
a label, not on every position of the sequence.

TRL's fused LM head (`trl.trainer.utils._fused_forward`) computes the vocabulary projection for
just the labelled positions on Triton devices, and for every position elsewhere (to keep tile shapes
fixed on compilers like Neuron's). On a CPU that is the most expensive part of an SFT step: the
agent's answers are ~5% of a packed episode's tokens, and projecting the other 95% onto SmolLM2's
49,152-token vocabulary, forward and backward, took 55% of each step. `score_answer_positions()`
makes TRL take its compact path on the CPU too; the loss is the same sum over the same positions,
only cheaper (SmolLM2-135M: 121 → 261 tok/s under bf16, `bench/train.py --precision-steps`).

It changes one private name of the pinned TRL (1.16). If a later TRL drops that name, the patch
logs that it is off and training is unchanged apart from its speed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["every_position", "score_answer_positions", "scoring_answers_only"]

logger = logging.getLogger(__name__)
_PATCHED = "_flywheel_answer_positions"
# Inside `every_position()` blocks (a bench's baseline), the switch stays off even when training asks.
_held_off = 0


def scoring_answers_only() -> bool:
    """Whether TRL's fused LM head scores only labelled positions on a CPU in this process."""
    from trl.trainer import utils

    return bool(getattr(getattr(utils, "_use_triton", None), _PATCHED, False))


def score_answer_positions() -> bool:
    """Makes TRL's fused LM head score only labelled positions on a CPU (idempotent); False when this
    TRL has no such switch (training then scores every position, as before)."""
    from trl.trainer import utils

    if _held_off:
        return False
    original = getattr(utils, "_use_triton", None)
    if original is None:
        logger.info("this TRL has no compact LM-head switch; SFT scores every position")
        return False
    if getattr(original, _PATCHED, False):
        return True

    def compact_on_cpu(device: Any) -> bool:
        return bool(original(device)) or getattr(device, "type", None) == "cpu"

    setattr(compact_on_cpu, _PATCHED, True)
    compact_on_cpu.original = original  # type: ignore[attr-defined]
    utils._use_triton = compact_on_cpu
    return True


@contextmanager
def every_position() -> Iterator[None]:
    """TRL's own behaviour (every position scored on a CPU) inside the block, even for training
    that asks for the switch: the baseline a bench measures the compact path against."""
    global _held_off
    from trl.trainer import utils

    patched = getattr(utils, "_use_triton", None)
    original = getattr(patched, "original", None)
    if original is not None:
        utils._use_triton = original
    _held_off += 1
    try:
        yield
    finally:
        _held_off -= 1
        if original is not None:
            utils._use_triton = patched
