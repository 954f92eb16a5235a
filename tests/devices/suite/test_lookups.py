"""The oracle acts only on what it observes: break a lookup tool and it fails the templates that need it.

Also: templates marked `gui` need the screens, because no tool reaches the field they change
or the value they read.
"""

from __future__ import annotations

from typing import Any

import pytest

from devices.sim import SimPhone
from devices.sim.tools import REGISTRY, NotFound, RegisteredTool
from devices.suite.registry import all_templates
from devices.suite.stats import oracle_run
from devices.suite.templates._world import WorldTemplate

WORLD = [t for t in all_templates() if isinstance(t, WorldTemplate)]
CASES = [(t, tool) for t in WORLD for tool in t.lookups]


def _broken(name: str) -> RegisteredTool:
    real = REGISTRY[name]

    def handler(state: Any, args: dict[str, Any]) -> Any:
        raise NotFound(f"{name} is out of order.")

    return RegisteredTool(real.spec, handler, real.check)


def test_every_template_needing_a_lookup_names_its_lookup_tools() -> None:
    missing = [t.name for t in WORLD if t.needs_lookup and not t.lookups and not t.gui]
    assert not missing
    assert all(tool in REGISTRY for _, tool in CASES)


@pytest.mark.parametrize(("template", "tool"), CASES, ids=[f"{t.name}:{tool}" for t, tool in CASES])
def test_breaking_a_lookup_makes_the_oracle_fail(template: WorldTemplate, tool: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    phone = SimPhone()
    split = template.splits()[0]
    assert oracle_run(phone, template, split, 0, 0)[1] == 1.0  # works with the tool
    monkeypatch.setitem(REGISTRY, tool, _broken(tool))
    scores = [oracle_run(phone, template, split, i, 0)[1] for i in range(2)]
    assert scores == [0.0, 0.0]


def test_gui_templates_change_or_read_what_no_tool_reaches() -> None:
    gui = [t for t in WORLD if t.gui]
    assert len(gui) >= 3
    accepted = {k for t in REGISTRY.values() for k in t.spec.parameters.get("properties", {})}
    assert not {"liked", "rating", "reference"} & accepted
    phone = SimPhone()
    for template in gui:
        _, score, _, final = oracle_run(phone, template, template.splits()[0], 0, 0)
        assert score == 1.0 and any(e["kind"] == "gui" and e["ok"] for e in final["log"]), template.name


def test_the_bank_reference_is_on_screen_only() -> None:
    phone = SimPhone()
    task = next(t for t in WORLD if t.name == "bank_reference_gui").generate("train", 0, 0)
    phone.reset(task)
    result = phone.call_tool("bank.list_transactions", {})
    assert result.ok and result.value and all("reference" not in r for r in result.value)
