"""Shared plumbing of the data-flywheel services (generator, rollout, verifier, curator)."""
