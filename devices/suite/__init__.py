"""The MobilePA-style task suite: templates in four families, seeded instances, checkers, oracle."""

from __future__ import annotations

__all__ = [
    "FAMILIES",
    "all_templates",
    "check_no_test_leak",
    "evaluate",
    "generate_split",
    "get_template",
    "templates_for",
]


def __getattr__(name: str) -> object:
    # Lazy so that importing one submodule does not load every template and the sandbox.
    if name in ("FAMILIES", "all_templates", "templates_for", "get_template"):
        from devices.suite import registry
        return getattr(registry, name)
    if name == "generate_split":
        from devices.suite.instances import generate_split
        return generate_split
    if name == "evaluate":
        from devices.suite.evaluate import evaluate
        return evaluate
    if name == "check_no_test_leak":
        from devices.suite.leakage import check_no_test_leak
        return check_no_test_leak
    raise AttributeError(f"module 'devices.suite' has no attribute {name!r}")
