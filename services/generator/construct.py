"""Task construction: template instances, two templates composed into one multi-step task,
and rule-based rephrasings of a goal; every constructed task is verified before it is used.

Verification is one oracle run on a SimPhone (`services.dataflow.tasks.oracle_check`): the
untouched state, before the oracle's first action, must score 0 (the task is not already
solved) and the oracle must reach 1 (the task is solvable by acting on observations). A
candidate that fails either is dropped, with the reason; each template instance is verified
once (the generator skips task ids it knows). Where the rollout plays the oracle itself (the
data phase of `flywheel run`), its episode, judged by the verifier, is the oracle run of a
template instance or a rephrasing (the suite's tests play every template's oracle; a rephrasing
keeps its actions): the generator then checks only what needs no simulator (`play_oracle=False`:
the initial state loads and is not already solved, `services.dataflow.tasks.solved_before_acting`),
so the simulator runs once per episode. A composition is the generator's own construction, which
no test has played (two parts' rows or changes can collide): it is always played first. A part
that answers the user ends the episode with its answer, so a composition puts it last and never
joins two of them (`answers`; measured on 1,014 compositions, a first part that answered failed
the oracle every time, 102 of them).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any

from devices.protocol import TaskInstance
from devices.sim.state import InitialStateError
from devices.suite.registry import templates_for
from devices.suite.scoring import composed_name
from devices.suite.template import Template
from schemas.tasks import Origin, Tier
from services.dataflow.heldout import held_out_mentions, task_text
from services.dataflow.tasks import AlreadySolved, oracle_check, solved_before_acting

__all__ = [
    "Candidate",
    "Catalogue",
    "answers",
    "build_catalogue",
    "compose",
    "instantiate",
    "rephrase",
    "tier_of",
    "verify",
]

logger = logging.getLogger(__name__)

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

    @cached_property
    def _by_name(self) -> dict[str, Template]:
        # every candidate looks templates up by name (a composition: every template's family)
        return {t.name: t for t in self.templates}

    def template(self, name: str) -> Template:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"template {name!r} is not in the generator's train catalogue") from None


def tier_of(template: Template, suite_seed: int = 0) -> Tier:
    """The template's declared tier (the suite sets it from oracle actions and lookups)."""
    return template.tier


@cache
def build_catalogue(suite_seed: int = 0, tiers: tuple[str, ...] = ()) -> Catalogue:
    """Every template that serves the train split (of `tiers` only, when given), with its tier
    (computed once)."""
    templates = tuple(t for t in templates_for("train") if not tiers or t.tier in tiers)
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


@cache
def answers(template: Template, suite_seed: int = 0) -> bool:
    """Whether `template`'s tasks ask for an answer (its expected change on its first train
    instance includes one): an answer ends the episode, so it can only be a composition's last part."""
    from devices.suite.scoring import initial_view

    task = template.generate("train", 0, suite_seed)
    expected = template.expect(dict(task.params), initial_view(task)) or []
    return any(e.label.startswith("answer") for e in expected)


def compose(catalogue: Catalogue, first: str, second: str, position: int,
            suite_seed: int) -> Candidate:
    """One task doing `first`'s instance then `second`'s, judged by both checkers; a part that
    answers goes last (its answer ends the episode), so `first` and `second` may trade places."""
    if answers(catalogue.template(first), suite_seed) and not answers(catalogue.template(second), suite_seed):
        first, second = second, first
    a = catalogue.template(first).generate("train", position, suite_seed)
    b = catalogue.template(second).generate("train", position, suite_seed)
    goal_b = b.goal[:1].lower() + b.goal[1:]
    task = TaskInstance(
        task_id=f"{composed_name([first, second])}-train-{position:05d}",
        template=composed_name([first, second]), family=a.family, split="train",
        index=a.index, seed=a.seed, tier=COMPOSED_TIER,
        apps=sorted(set(a.apps) | set(b.apps)) if a.apps and b.apps else [],
        params={"parts": [{"template": first, "params": a.params},
                          {"template": second, "params": b.params}]},
        goal=f"{a.goal.rstrip()} Then, {goal_b}",
        initial_state=_merge(dict(a.initial_state), dict(b.initial_state)),
        start_clock_ms=a.start_clock_ms, max_steps=a.max_steps + b.max_steps)
    return Candidate(task, COMPOSED_TIER, "composed", (first, second))


def rephrase(candidate: Candidate, variant: int, rephraser: Any = None) -> Candidate:
    """The same task with its goal said another way (the checker is unchanged): by the local
    language model when one is configured and its rewrite keeps every value, else by rule."""
    goal = candidate.task.goal.strip()
    text = rephraser.rewrite(goal, dict(candidate.task.params)) if rephraser else None
    if text is None:
        forms = _QUESTION_FORMS if goal.endswith("?") else _INSTRUCTION_FORMS
        text = _by_rule(goal, forms[variant % len(forms)])
    task = candidate.task.model_copy(update={"goal": text,
                                             "task_id": f"{candidate.task.task_id}~r{variant}"})
    task = TaskInstance.model_validate(task.model_dump())  # re-validated, not just copied
    return Candidate(task, candidate.tier, "rephrased",
                     (*candidate.parents, candidate.task.template) if not candidate.parents
                     else candidate.parents)


def _by_rule(goal: str, form: str) -> str:
    lower = goal[:1].lower() + goal[1:]
    return form.format(goal=goal, lower=lower, bare=lower.rstrip(".!"))


def verify(candidate: Candidate, harness: Any, *, play_oracle: bool = True) -> str | None:
    """None when the task is sound; otherwise one sentence saying why it is dropped.
    `harness` is a Harness around a SimPhone (services.dataflow.tasks.new_harness); without
    `play_oracle` a template instance or rephrasing is not played on it: the oracle's run is
    left to the rollout that plays it (a composition is played either way)."""
    task = candidate.task
    leaks = held_out_mentions(task_text(task.goal, task.params))
    if leaks:
        return f"it carries {', '.join(leaks[:3])} (a train task must not)"
    try:
        if not play_oracle and candidate.origin != "composed":
            solved_before_acting(task)
            return None
        _, solved = oracle_check(task, harness)
    except InitialStateError as error:
        return f"its initial state does not load ({error})"
    except AlreadySolved as solved_already:
        return str(solved_already)
    except (LookupError, ValueError, RuntimeError) as error:  # e.g. two parts' rows collide
        return f"the oracle fails on it ({type(error).__name__}: {error})"
    if solved != 1.0:
        return f"the oracle reaches only {solved:.2f}"
    return None
