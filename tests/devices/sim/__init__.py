"""Tests for the simulated phone."""
