"""Tests of the event contract."""
