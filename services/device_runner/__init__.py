"""The device runner service: executes requested actions on one phone and reports observations."""

from __future__ import annotations

__all__: list[str] = []
