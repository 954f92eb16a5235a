"""Evaluates a policy on a split: per-template, per-family and overall (MobilePA-weighted) scores."""

from __future__ import annotations

import logging
from collections import defaultdict
from statistics import fmean
from typing import Any

from pydantic import Field
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from devices.harness.harness import Harness
from devices.harness.spec import HarnessSpec
from devices.protocol import too_many_faults
from devices.suite.episode import run_episode
from devices.suite.instances import generate_split
from devices.suite.policies import Policy, make_policy
from devices.suite.registry import FAMILIES
from schemas.envelope import Frozen
from schemas.tasks import Split
from schemas.training import FamilyScores

__all__ = ["SuiteReport", "evaluate"]

logger = logging.getLogger(__name__)

# The weighted sum is rounded so a perfect run reads 1.0, not 0.9999999999999999.
_DIGITS = 9


class SuiteReport(Frozen):
    """The result of one evaluation run."""

    policy: str
    harness_version: str
    split: Split
    suite_seed: int
    n_per_template: int
    episodes: int = Field(ge=0)
    scores: FamilyScores
    overall: float = Field(ge=0.0, le=1.0)
    template_scores: dict[str, float]
    template_families: dict[str, str]
    template_tiers: dict[str, str] = Field(default_factory=dict)
    tiers: dict[str, float] = Field(default_factory=dict, description="Mean template score per tier.")
    template_progress: dict[str, float] = Field(
        default_factory=dict, description="Mean share of sub-goals met per template.")
    faults: int = Field(default=0, ge=0, description="Episodes a device error ended early; they count in overall.")
    fault_share: float = Field(default=0.0, ge=0.0, le=1.0)
    overall_excluding_faults: float | None = Field(
        default=None, description="The overall of the episodes without a fault (None when none faulted).")

    @property
    def too_many_faults(self) -> bool:
        return too_many_faults(self.fault_share)

    def to_json_dict(self) -> dict[str, Any]:
        """The report as JSON: families flattened next to `overall`."""
        data = self.model_dump(mode="json")
        data["families"] = data.pop("scores")
        return data


def evaluate(policy: str | Policy, split: Split = "dev", n_per_template: int = 3,
             suite_seed: int = 0, *, random_seed: int = 0, progress: bool = True,
             console: Console | None = None, spec: HarnessSpec | None = None) -> SuiteReport:
    """Runs `policy` (a built-in name, MODULE:CLASS or an instance) on n instances of every
    template in `split` on a fresh SimPhone inside a harness built from `spec`."""
    from devices.sim import SimPhone  # the sandbox is only needed when evaluating

    agent = make_policy(policy, random_seed) if isinstance(policy, str) else policy
    tasks = generate_split(split, n_per_template, suite_seed)
    per_template: dict[str, list[float]] = defaultdict(list)
    clean: dict[str, list[float]] = defaultdict(list)
    progress_of: dict[str, list[float]] = defaultdict(list)
    faults = 0
    families: dict[str, str] = {}
    tiers: dict[str, str] = {}
    harness = Harness(SimPhone(), spec)
    progress_bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                            MofNCompleteColumn(), TimeElapsedColumn(),
                            console=console or Console(stderr=True), disable=not progress,
                            transient=False)
    try:
        with progress_bar:
            bar = progress_bar.add_task(f"{agent.name} on {split}", total=len(tasks))
            for task in tasks:
                result = run_episode(harness, task, agent)
                per_template[task.template].append(result.score)
                if result.fault is None:
                    clean[task.template].append(result.score)
                faults += result.fault is not None
                progress_of[task.template].append(result.progress)
                families[task.template] = task.family
                tiers[task.template] = task.tier or "easy"
                progress_bar.advance(bar)
    finally:
        harness.close()
    template_scores = {name: fmean(scores) for name, scores in per_template.items()}
    scores = _family_scores(template_scores, families)
    excluding = None
    if faults:
        excluding = _family_scores({n: fmean(v) for n, v in clean.items()}, families).overall
    return SuiteReport(policy=agent.name, harness_version=harness.version, split=split, suite_seed=suite_seed,
                       n_per_template=n_per_template, episodes=len(tasks), scores=scores,
                       overall=min(1.0, max(0.0, round(scores.overall, _DIGITS))),
                       template_scores=template_scores, template_families=families,
                       template_tiers=tiers, tiers={
                           tier: fmean(s for n, s in template_scores.items() if tiers[n] == tier)
                           for tier in sorted(set(tiers.values()))},
                       template_progress={n: fmean(v) for n, v in progress_of.items()},
                       faults=faults, fault_share=faults / len(tasks) if tasks else 0.0,
                       overall_excluding_faults=excluding)


def _family_scores(template_scores: dict[str, float], families: dict[str, str]) -> FamilyScores:
    """Each family's mean template score (0 for a family with none)."""
    means = {}
    for family in FAMILIES:
        members = [s for name, s in template_scores.items() if families[name] == family]
        means[family] = fmean(members) if members else 0.0
    return FamilyScores(**means)
