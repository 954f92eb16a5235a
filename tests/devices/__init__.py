"""Tests for the devices package."""
