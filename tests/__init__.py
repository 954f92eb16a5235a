"""Tests mirroring the packages, integration tests against the real local broker."""
