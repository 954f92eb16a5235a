"""The kit's tool specs (devices/kit/tool_specs.json, what a real phone serves) are exactly the
simulator's registered specs, in registration order, with the same argument checks."""

from __future__ import annotations

from typing import Any

import pytest

from devices.kit.errors import BadArguments
from devices.kit.specs import SPECS_PATH, tool_specs
from devices.sim.export_specs import registered_specs, render
from devices.sim.tools import REGISTRY


def test_the_kit_specs_are_the_registered_specs() -> None:
    assert SPECS_PATH.read_text(encoding="utf-8") == render(registered_specs()), (
        "the simulator's tools changed: run `python -m devices.sim.export_specs`")
    assert [tool.spec for tool in tool_specs().values()] == [t.spec for t in REGISTRY.values()]


@pytest.mark.parametrize("name", ["settings.set", "clock.set_alarm", "contacts.add"])
def test_the_kit_checks_arguments_as_the_simulator_does(name: str) -> None:
    kit, sim = tool_specs()[name].check, REGISTRY[name].check
    for arguments in ({}, {"nope": 1}, {"key": "wifi", "value": True}, {"time": "07:30"},
                      {"time": "7.30"}, {"name": "Ann", "phone": "+1-555"}):
        assert _outcome(kit, arguments) == _outcome(sim, arguments)


def _outcome(check: Any, arguments: dict[str, Any]) -> Any:
    try:
        return check(dict(arguments))
    except BadArguments as error:
        return f"BadArguments: {error.message}"
