"""Kafka plumbing: codec, typed producer/consumer, faust, dead letters, sinks, local broker."""

from __future__ import annotations

# Nothing is re-exported: importing `streams` must not pull in kafka, faust or duckdb;
# import the submodule you need (streams.producer, streams.consumer, ...).
__all__: list[str] = []
