"""The trainer's tiny-model fixtures, shared with the service tests."""

from __future__ import annotations

from tests.trainer.conftest import oracle_snapshot, tiny_model

__all__ = ["oracle_snapshot", "tiny_model"]
