"""The archiver service: sinks every topic to partitioned Parquet, replays it, queries it."""

from __future__ import annotations

__all__: list[str] = []
