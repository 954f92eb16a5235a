"""Tests of the archiver service: rows, store, loop, replay, queries."""
