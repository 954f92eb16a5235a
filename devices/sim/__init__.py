"""The simulated phone: a deterministic, seeded sandbox of apps, tools and screens in pure Python."""

from __future__ import annotations

__all__ = ["LogEntry", "SimPhone", "SimState", "ToolSpec"]


def __getattr__(name: str) -> object:
    # Lazy so that `import devices.sim.state` does not pull in every app module.
    if name == "SimPhone":
        from devices.sim.phone import SimPhone
        return SimPhone
    if name in ("SimState", "LogEntry"):
        from devices.sim import state
        return getattr(state, name)
    if name == "ToolSpec":
        from devices.sim.tools import ToolSpec
        return ToolSpec
    raise AttributeError(f"module 'devices.sim' has no attribute {name!r}")
