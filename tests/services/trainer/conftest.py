"""The trainer's tiny-model fixtures, shared with the service tests (which need the 'train' extra)."""

from __future__ import annotations

import importlib.util

from tests.trainer.conftest import oracle_snapshot, tiny_model

__all__ = ["oracle_snapshot", "tiny_model"]

if importlib.util.find_spec("trl") is None:
    collect_ignore_glob = ["test_*.py"]
