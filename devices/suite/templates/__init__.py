"""The suite's task templates, one module per family (tool use has two)."""

from __future__ import annotations

__all__: list[str] = []
