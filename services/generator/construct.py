"""Task construction: template instances, two templates composed into one multi-step task,
and rule-based rephrasings of a goal; every constructed task is verified before it is used.

Verification runs on a fresh SimPhone: the untouched state must score 0 (the task is not
already solved) and the oracle must reach 1 (the task is solvable by acting on
observations). A candidate that fails either is dropped, with the reason.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache
from typing import Any

from devices.protocol import TaskInstance
from devices.sim.state import InitialStateError
from devices.suite.registry import templates_for
from devices.suite.template import Template
from schemas.tasks import Origin, Tier
from services.dataflow.tasks import composed_name, oracle_actions, score_state

__all__ = [
    "Candidate",
    "Catalogue",
    "build_catalogue",
    "compose",
    "instantiate",
    "rephrase",
    "tier_of",
    "verify",
]

logger = logging.getLogger(__name__)

#: Oracle actions that make a template easy / medium (more is hard) when it declares no tier.
EASY_MAX_ACTIONS = 2
MEDIUM_MAX_ACTIONS = 4
#: A composed task may take the parts' step budgets together.
COMPOSED_TIER: Tier = "hard"

#: Rule-based rephrasings: (for questions, for instructions). Index = variant number.
_QUESTION_FORMS = ("Quick question: {goal}", "I'd like to know this. {goal}",
                   "Can you find out for me? {goal}")
_INSTRUCTION_FORMS = ("Please {lower}", "I need you to {lower}", "{goal} Thanks!",
                      "Could you {bare}?")


@dataclass(frozen=True)
class Candidate:
    """A task the generator may publish, with where it came from."""

    task: TaskInstance
    tier: Tier
    origin: Origin
    parents: tuple[str, ...]


@dataclass(frozen=True)
class Catalogue:
    """The train templates the generator draws from, with their tiers."""

    templates: tuple[Template, ...]
    tiers: dict[str, Tier]

    def template(self, name: str) -> Template:
        for template in self.templates:
            if template.name == name:
                return template
        raise KeyError(f"template {name!r} is not in the generator's train catalogue")


def tier_of(template: Template, suite_seed: int = 0) -> Tier:
    """The template's declared tier, else one measured from its oracle's action count."""
    declared = getattr(template, "tier", None)
    if declared in ("easy", "medium", "hard"):
        return declared  # type: ignore[return-value]
    from devices.sim import SimPhone

    actions, _ = oracle_actions(template.generate("train", 0, suite_seed), SimPhone())
    if len(actions) <= EASY_MAX_ACTIONS:
        return "easy"
    return "medium" if len(actions) <= MEDIUM_MAX_ACTIONS else "hard"


@cache
def build_catalogue(suite_seed: int = 0) -> Catalogue:
    """Every template that serves the train split, with its tier (computed once)."""
    templates = tuple(templates_for("train"))
    return Catalogue(templates, {t.name: tier_of(t, suite_seed) for t in templates})


def instantiate(catalogue: Catalogue, name: str, position: int, suite_seed: int) -> Candidate:
    task = catalogue.template(name).generate("train", position, suite_seed)
    return Candidate(task, catalogue.tiers[name], "template", ())


def _merge(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Overlays merged app by app and table by table (rows appended, settings/memory joined)."""
    merged: dict[str, Any] = {key: value for key, value in first.items()}
    for app, tables in second.items():
        if app not in merged:
            merged[app] = tables
        elif isinstance(tables, dict) and isinstance(merged[app], dict):
            inner = dict(merged[app])
            for key, value in tables.items():
                if isinstance(value, list) and isinstance(inner.get(key), list):
                    inner[key] = [*inner[key], *value]
                else:
                    inner[key] = value
            merged[app] = inner
        else:
            merged[app] = tables
    return merged


def compose(catalogue: Catalogue, first: str, second: str, position: int,
            suite_seed: int) -> Candidate:
    """One task doing `first`'s instance then `second`'s, judged by both checkers."""
    a = catalogue.template(first).generate("train", position, suite_seed)
    b = catalogue.template(second).generate("train", position, suite_seed)
    goal_b = b.goal[:1].lower() + b.goal[1:]
    task = TaskInstance(
        task_id=f"{composed_name([first, second])}-train-{position:05d}",
        template=composed_name([first, second]), family=a.family, split="train",
        index=a.index, seed=a.seed,
        params={"parts": [{"template": first, "params": a.params},
                          {"template": second, "params": b.params}]},
        goal=f"{a.goal.rstrip()} Then, {goal_b}",
        initial_state=_merge(dict(a.initial_state), dict(b.initial_state)),
        start_clock_ms=a.start_clock_ms, max_steps=a.max_steps + b.max_steps)
    return Candidate(task, COMPOSED_TIER, "composed", (first, second))


def rephrase(candidate: Candidate, variant: int) -> Candidate:
    """The same task with its goal said another way (rule-based; the checker is unchanged)."""
    goal = candidate.task.goal.strip()
    if goal.endswith("?"):
        form = _QUESTION_FORMS[variant % len(_QUESTION_FORMS)]
    else:
        form = _INSTRUCTION_FORMS[variant % len(_INSTRUCTION_FORMS)]
    lower = goal[:1].lower() + goal[1:]
    text = form.format(goal=goal, lower=lower, bare=lower.rstrip(".!"))
    task = candidate.task.model_copy(update={"goal": text,
                                             "task_id": f"{candidate.task.task_id}~r{variant}"})
    task = TaskInstance.model_validate(task.model_dump())  # re-validated, not just copied
    return Candidate(task, candidate.tier, "rephrased",
                     (*candidate.parents, candidate.task.template) if not candidate.parents
                     else candidate.parents)


def verify(candidate: Candidate, phone: Any) -> str | None:
    """None when the task is sound; otherwise one sentence saying why it is dropped."""
    task = candidate.task
    try:
        phone.reset(task)
    except InitialStateError as error:
        return f"its initial state does not load ({error})"
    untouched = score_state(task, phone.state)
    if untouched != 0.0:
        return f"the untouched state already scores {untouched:.2f}"
    _, solved = oracle_actions(task, phone)
    if solved != 1.0:
        return f"the oracle reaches only {solved:.2f}"
    return None
