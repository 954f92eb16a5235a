"""The sealed policy boundary: `--policy MODULE:CLASS` runs the policy in a process of its own.

It lives in the harness (devices.harness.sealed), beside the policy protocol, so that a real
phone's evaluation can seal a policy without the suite; this module keeps the names importable.
"""

from __future__ import annotations

from devices.harness.sealed import DEFAULT_STEP_TIMEOUT_S, START_TIMEOUT_S, SealedPolicy

__all__ = ["DEFAULT_STEP_TIMEOUT_S", "START_TIMEOUT_S", "SealedPolicy"]
