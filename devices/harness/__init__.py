"""The harness: tool catalogue, memory, skills, sub-agents and context around any Device.

`Harness(device, spec)` wraps a SimPhone or an AdbPhone; `HarnessSpec` is its versioned,
content-addressed configuration; `Policy` is the protocol every agent implements (it sees the
goal, the `Catalogue` and observations only).
"""

from __future__ import annotations

__all__ = [
    "Catalogue",
    "Harness",
    "HarnessSpec",
    "Policy",
    "SkillEntry",
    "SubagentEntry",
    "ToolEntry",
]


def __getattr__(name: str) -> object:
    # Lazy so that importing the spec does not load the harness and its policy machinery.
    if name == "Harness":
        from devices.harness.harness import Harness
        return Harness
    if name == "HarnessSpec":
        from devices.harness.spec import HarnessSpec
        return HarnessSpec
    if name in ("Catalogue", "SkillEntry", "SubagentEntry", "ToolEntry"):
        from devices.harness import catalogue
        return getattr(catalogue, name)
    if name == "Policy":
        from devices.harness.policy import Policy
        return Policy
    raise AttributeError(f"module 'devices.harness' has no attribute {name!r}")
