"""`python -m devices.suite.policy_host MODULE:CLASS`: the far side of the sealed policy boundary,
kept runnable under its old name; it lives in devices.harness.policy_host."""

from __future__ import annotations

from devices.harness.policy_host import main, serve

__all__ = ["main", "serve"]

if __name__ == "__main__":
    raise SystemExit(main())
