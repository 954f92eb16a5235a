"""Tests of the flywheel CLI commands."""
