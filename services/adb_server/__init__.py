"""The adb server phone runners talk to, started only when an operator runs this service."""

from __future__ import annotations

__all__: list[str] = []
