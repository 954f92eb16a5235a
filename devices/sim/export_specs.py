"""`python -m devices.sim.export_specs`: rewrites devices/kit/tool_specs.json from the simulator's
tool registry (every app module loaded), the specs the real phone serves."""

from __future__ import annotations

import json
import sys
from typing import Any

from devices.kit.specs import SPECS_PATH

__all__ = ["main", "registered_specs", "render"]


def registered_specs() -> list[dict[str, Any]]:
    """Every registered tool's spec as a dict, in registration order."""
    import devices.sim.apps  # noqa: F401  (registers every app's tools)
    from devices.sim.tools import REGISTRY

    return [tool.spec.to_dict() for tool in REGISTRY.values()]


def render(specs: list[dict[str, Any]]) -> str:
    return json.dumps(specs, indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    SPECS_PATH.write_text(render(registered_specs()), encoding="utf-8")
    print(f"wrote {SPECS_PATH}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
