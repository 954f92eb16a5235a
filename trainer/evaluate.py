"""Evaluation of a planner policy on a suite split: MobilePA-style scores with 95% bootstrap intervals.

Every episode's checker score, success, output tokens, actions and invalid answers are kept;
scores are aggregated per template, family and tier, and the overall score is the suite's
weighting of family means. Intervals come from a two-level bootstrap: each family's templates
resampled with replacement, then each drawn template's episodes, so the spread between templates
counts even with one episode per template (the suite's default), and no family drops out.
"""

from __future__ import annotations

import logging
import random
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from statistics import fmean, median
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from trainer.outcome import SUCCESS_SCORE, main_tool_calls

__all__ = ["EpisodeRecord", "EvalSummary", "bootstrap_interval", "evaluate_policy", "summarise"]

logger = logging.getLogger(__name__)

FAMILY_WEIGHTS = {"tool": 0.5, "memory": 0.2, "skills": 0.2, "subagent": 0.1}
# Resamples of the bootstrap: enough for stable 2.5/97.5 percentiles at this scale.
BOOTSTRAP_RESAMPLES = 1000


@dataclass(frozen=True)
class EpisodeRecord:
    task_id: str
    template: str
    family: str
    tier: str
    score: float
    success: float
    steps: int
    output_tokens: int
    tool_calls: int
    invalid: int


@dataclass
class EvalSummary:
    """What `eval.reported` carries, plus validity and prompt size."""

    policy: str
    split: str
    episodes: int
    overall: float
    overall_ci: tuple[float, float]
    success: float
    success_ci: tuple[float, float]
    families: dict[str, float]
    family_ci: dict[str, tuple[float, float]]
    tiers: dict[str, float]
    templates: dict[str, float]
    mean_output_tokens: float
    mean_tool_calls: float
    validity: float
    median_prompt_tokens: float
    records: list[EpisodeRecord] = field(default_factory=list)
    harness: str = ""  # the version of the harness spec the episodes ran in

    def to_json_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("records")
        return data


def _tier(task: Any) -> str:
    tier = getattr(task, "tier", None) or (task.params.get("tier") if isinstance(task.params, dict) else None)
    return str(tier) if tier else "default"


def _overall(by_template: dict[str, list[float]], families: dict[str, str]) -> float:
    family_scores: dict[str, list[float]] = defaultdict(list)
    for name, scores in by_template.items():
        family_scores[families[name]].append(fmean(scores))
    present = {f: fmean(v) for f, v in family_scores.items()}
    return sum(FAMILY_WEIGHTS[f] * present.get(f, 0.0) for f in FAMILY_WEIGHTS)


def bootstrap_interval(records: Sequence[EpisodeRecord], statistic: Any, *, resamples: int = BOOTSTRAP_RESAMPLES,
                       seed: int = 0) -> tuple[float, float]:
    """The 95% percentile interval of `statistic(records)` under a two-level bootstrap: within each
    family, templates are resampled with replacement (a template drawn twice counts twice), then
    each drawn template's episodes. Resampling episodes alone would give a zero-width interval
    whenever each template has one episode, hiding the template-to-template spread."""
    if not records:
        return (0.0, 0.0)
    rng = random.Random(seed)
    by_template: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for record in records:
        by_template[record.template].append(record)
    by_family: dict[str, list[str]] = defaultdict(list)
    for template, group in by_template.items():
        by_family[group[0].family].append(template)
    copies: dict[tuple[str, int], list[EpisodeRecord]] = {}

    def copy_of(template: str, k: int) -> list[EpisodeRecord]:
        # the k-th draw of a template in one resample is a template of its own
        if (template, k) not in copies:
            copies[(template, k)] = [replace(r, template=f"{template}#{k}") for r in by_template[template]]
        return copies[(template, k)]

    values = []
    for _ in range(resamples):
        sample: list[EpisodeRecord] = []
        for templates in by_family.values():
            for k in range(len(templates)):
                group = copy_of(rng.choice(templates), k)
                sample.extend(rng.choice(group) for _ in group)
        values.append(statistic(sample))
    values.sort()
    return (values[int(0.025 * (resamples - 1))], values[int(0.975 * (resamples - 1))])


def _overall_of(records: Sequence[EpisodeRecord]) -> float:
    by_template: dict[str, list[float]] = defaultdict(list)
    families = {}
    for r in records:
        by_template[r.template].append(r.score)
        families[r.template] = r.family
    return _overall(by_template, families)


def summarise(policy: str, split: str, records: Sequence[EpisodeRecord], *, validity: float,
              prompt_tokens: Sequence[int], seed: int = 0) -> EvalSummary:
    by_template: dict[str, list[float]] = defaultdict(list)
    by_family: dict[str, list[EpisodeRecord]] = defaultdict(list)
    by_tier: dict[str, list[float]] = defaultdict(list)
    for r in records:
        by_template[r.template].append(r.score)
        by_family[r.family].append(r)
        by_tier[r.tier].append(r.score)
    families = {f: fmean(fmean(by_template[t]) for t in {r.template for r in rs}) for f, rs in by_family.items()}
    family_ci = {f: bootstrap_interval(rs, lambda s: fmean(x.score for x in s), seed=seed)
                 for f, rs in by_family.items()}
    return EvalSummary(
        policy=policy, split=split, episodes=len(records), overall=_overall_of(records),
        overall_ci=bootstrap_interval(records, _overall_of, seed=seed),
        success=fmean(r.success for r in records) if records else 0.0,
        success_ci=bootstrap_interval(records, lambda s: fmean(x.success for x in s), seed=seed),
        families=families, family_ci=family_ci, tiers={t: fmean(v) for t, v in by_tier.items()},
        templates={t: fmean(v) for t, v in by_template.items()},
        mean_output_tokens=fmean(r.output_tokens for r in records) if records else 0.0,
        mean_tool_calls=fmean(r.tool_calls for r in records) if records else 0.0,
        validity=validity, median_prompt_tokens=float(median(prompt_tokens)) if prompt_tokens else 0.0,
        records=list(records))


def evaluate_policy(policy: Any, tasks: Sequence[Any], *, split: str = "dev", progress: bool = True,
                    console: Console | None = None, seed: int = 0, spec: Any = None,
                    batch_size: int = 1, stop: threading.Event | None = None) -> EvalSummary:
    """Runs `policy` once on each task on a SimPhone inside the harness (`spec`) and summarises with
    intervals. With `batch_size` > 1 and a batching policy (ModelPolicy), that many episodes run at
    once and their prompts are decoded together (trainer.batched). A set `stop` ends it between
    steps with TrainingStopped."""
    from devices.harness.spec import HarnessSpec
    from trainer.progress import PHASES
    from trainer.stopping import check_stop

    def stop_check() -> None:
        check_stop(stop, f"during the {split} evaluation")

    stats = getattr(policy, "stats", None)
    records: list[EpisodeRecord] = []
    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=console or Console(stderr=True), disable=not progress)

    def record(task: Any, score: float, steps: int, output_tokens: int, tool_calls: int, invalid: int) -> None:
        records.append(EpisodeRecord(
            task_id=task.task_id, template=task.template, family=task.family, tier=_tier(task), score=score,
            success=float(score >= SUCCESS_SCORE), steps=steps, output_tokens=output_tokens,
            tool_calls=tool_calls, invalid=invalid))
        bar.advance(job)
        PHASES.update(len(records))
        logger.info("%d/%d %s score %.2f steps %d", len(records), len(tasks), task.task_id, score, steps)

    PHASES.start(f"eval ({split})", len(tasks), "episodes")
    with bar:
        job = bar.add_task(f"{policy.name} on {split}", total=len(tasks))
        if batch_size > 1 and hasattr(policy, "generate_batch"):
            from trainer.batched import run_batched

            run_batched(policy, tasks, spec=spec, batch_size=batch_size, before_step=stop_check,
                        on_episode=lambda e: record(e.task, e.score, e.steps, e.output_tokens, e.tool_calls,
                                                    e.invalid))
            order = {task.task_id: i for i, task in enumerate(tasks)}
            records.sort(key=lambda r: order[r.task_id])
        else:
            _evaluate_one_by_one(policy, tasks, spec, stats, record, stop_check)
    validity = stats.validity if stats else 1.0
    prompt_tokens = list(stats.prompt_tokens) if stats else []
    summary = summarise(policy.name, split, records, validity=validity, prompt_tokens=prompt_tokens, seed=seed)
    summary.harness = (spec or HarnessSpec.default()).version
    return summary


def _evaluate_one_by_one(policy: Any, tasks: Sequence[Any], spec: Any, stats: Any, record: Any,
                         stop_check: Callable[[], None]) -> None:
    from devices.harness import Harness
    from devices.sim import SimPhone
    from devices.suite.episode import run_episode

    phone = Harness(SimPhone(), spec)
    try:
        for task in tasks:
            stop_check()
            before_tokens = len(stats.output_tokens) if stats else 0
            before_invalid = stats.invalid if stats else 0
            result = run_episode(phone, task, policy)
            record(task, result.score, result.steps,
                   sum(stats.output_tokens[before_tokens:]) if stats else 0,
                   main_tool_calls(phone, result.steps), (stats.invalid - before_invalid) if stats else 0)
    finally:
        phone.close()
