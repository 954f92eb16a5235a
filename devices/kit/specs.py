"""Every tool's spec: the contract a phone serves, simulated or real, as data.

`tool_specs.json` lists every tool (name, app, description, JSON-Schema parameters, returns) in
the simulator's registration order. The simulator registers the same specs with its handlers
(devices.sim.tools); `python -m devices.sim.export_specs` rewrites the file from them, and
tests/devices/sim/test_tool_specs.py fails when the two differ. The real phone (devices.adb)
serves the specs from here, each with its compiled argument check.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from devices.kit.validators import Checker, compile_validator

__all__ = ["SPECS_PATH", "CheckedTool", "ToolSpec", "tool_specs"]

SPECS_PATH = Path(__file__).with_name("tool_specs.json")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What an agent (or a task author) sees of a tool."""

    name: str
    app: str
    description: str
    parameters: dict[str, Any]
    returns: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "app": self.app, "description": self.description,
                "parameters": self.parameters, "returns": self.returns}


@dataclass(frozen=True, slots=True)
class CheckedTool:
    """A tool's spec with its compiled argument check (`check(arguments) -> arguments`)."""

    spec: ToolSpec
    check: Checker


@cache
def _load() -> tuple[CheckedTool, ...]:
    rows = json.loads(SPECS_PATH.read_text(encoding="utf-8"))
    return tuple(CheckedTool(spec := ToolSpec(**row), compile_validator(spec.parameters))
                 for row in rows)


def tool_specs() -> dict[str, CheckedTool]:
    """Every tool by name, in registration order (a fresh dict; the entries are shared)."""
    return {tool.spec.name: tool for tool in _load()}
