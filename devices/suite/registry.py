"""The template registry: every template of the suite, by name, family and split."""

from __future__ import annotations

import importlib
from functools import cache

from devices.suite.template import Template
from schemas.tasks import Family, Split

__all__ = [
    "FAMILIES",
    "TEMPLATE_MODULES",
    "UnknownTemplate",
    "all_templates",
    "get_template",
    "templates_for",
]

FAMILIES: tuple[Family, ...] = ("tool", "memory", "skills", "subagent")

# One module per family (tool use has three: people, money, daily life); each exports TEMPLATES.
TEMPLATE_MODULES = (
    "devices.suite.templates.tool_people",
    "devices.suite.templates.tool_money",
    "devices.suite.templates.tool_life",
    "devices.suite.templates.tool_more",
    "devices.suite.templates.tool_deep",
    "devices.suite.templates.tool_chains",
    "devices.suite.templates.tool_chains_more",
    "devices.suite.templates.tool_errands",
    "devices.suite.templates.family_errands",
    "devices.suite.templates.memory",
    "devices.suite.templates.memory_deep",
    "devices.suite.templates.skills",
    "devices.suite.templates.skills_deep",
    "devices.suite.templates.subagent",
    "devices.suite.templates.subagent_deep",
)


class UnknownTemplate(KeyError):
    """No template has that name."""


@cache
def all_templates() -> tuple[Template, ...]:
    """Every template, in a stable order (module order, then declaration order)."""
    found: list[Template] = []
    for module in TEMPLATE_MODULES:
        found.extend(cls() for cls in importlib.import_module(module).TEMPLATES)
    names = [t.name for t in found]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"template names must be unique; repeated: {duplicates}")
    return tuple(found)


def templates_for(split: Split, family: Family | None = None) -> list[Template]:
    """The templates that generate instances in `split` (held-out ones only in test)."""
    return [t for t in all_templates()
            if split in t.splits() and (family is None or t.family == family)]


def get_template(name: str) -> Template:
    for template in all_templates():
        if template.name == name:
            return template
    raise UnknownTemplate(f"no task template is named {name!r}; run `flywheel suite list`")
