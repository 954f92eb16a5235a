"""Rounds of model–harness co-evolution: θ(k+1) = U_M(θ(k)), η(k+1) = U_H(η(k); failures(θ(k+1), η(k))).

Each generation first updates the model (`train`), then the harness: the new model runs in
the current harness on training tasks (`collect` returns the rollout's events: tasks,
episodes, verdicts, failure traces), the evolver proposes deltas from the failures, and each
proposal goes through the paired dev/test gate with the new model. Then the four cells of
the round are scored on dev and test — before (θk, ηk), model alone (θk+1, ηk), harness
alone (θk, ηk+1) and both (θk+1, ηk+1) — so each side's contribution is visible.

`RoundsReport.write` puts `rounds.parquet` (one row per generation × condition × split),
`decisions.parquet` (every proposal's outcome, deltas and motivating failure ids) and
`events.parquet` (the harness events and failure traces) in the run folder, for DuckDB:
    SELECT generation, condition, split, overall FROM 'var/rounds/*/rounds.parquet'
Every harness event and every failure trace also goes to `emit` (the typed producer in
`flywheel run`, so the archive holds them and a promotion's `motivated_by` ids join the
archive's `failures` view). `run_rounds` owns the generation loop; `Rounds` runs one round at
a time for a caller that owns it (services.cli.rounds_phase, inside `flywheel run`), and
`plot_rounds` draws the table.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq
from rich.table import Table

from schemas.envelope import Event
from schemas.harness import HarnessPromoted, HarnessProposed, HarnessRejected
from schemas.tasks import Split
from services.dataflow.evolution.decide import (
    EvolverConfig,
    EvolverState,
    evolve,
    handle,
    initial_state,
)
from services.dataflow.evolution.delta import spec_version
from services.dataflow.evolution.paired import (
    DEFAULT_RESAMPLES,
    DEFAULT_TOLERANCE,
    FAMILY_WEIGHTS,
    EpisodeScore,
    summarise,
)
from services.dataflow.evolution.propose import DEFAULT_MIN_SUPPORT, propose
from services.dataflow.ids import derived_id
from services.dataflow.registry import HarnessRegistry
from services.evolver.gate import CachedRunner, evaluate_proposal

__all__ = [
    "CONDITIONS",
    "Model",
    "PromotionRow",
    "RoundRow",
    "Rounds",
    "RoundsConfig",
    "RoundsReport",
    "plot_rounds",
    "run_rounds",
]

logger = logging.getLogger(__name__)

#: The four cells of a round: which side is at its new value.
CONDITIONS: dict[str, tuple[bool, bool]] = {
    "before": (False, False), "model": (True, False), "harness": (False, True),
    "both": (True, True),
}
SPLITS: tuple[Split, ...] = ("dev", "test")


class Model(Protocol):
    """A policy-producing model: `name` identifies it (checkpoint id or scripted policy).

    The suite's collector and runner (services.evolver.suite_runner) also call its
    `policy()` for a fresh policy object; `flywheel run --generations N` passes the trainer's
    checkpoint (policy: trainer.policy.ModelPolicy) and its SFT/GRPO step as `train`."""

    name: str


M = TypeVar("M", bound=Model)
Train = Callable[[M, int], M]
Collect = Callable[[M, Mapping[str, Any], int], Sequence[Event]]
Score = Callable[[M, Mapping[str, Any], Split], Sequence[EpisodeScore]]


@dataclass(frozen=True)
class RoundsConfig:
    generations: int = 3
    max_proposals: int = 6  # evaluated per generation; each costs two runs on dev (and test)
    min_support: int = DEFAULT_MIN_SUPPORT
    tolerance: float = DEFAULT_TOLERANCE
    resamples: int = DEFAULT_RESAMPLES
    suite_seed: int = 0
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])


@dataclass(frozen=True)
class RoundRow:
    run_id: str
    generation: int
    condition: str
    split: str
    model: str
    harness: str
    overall: float
    tool: float
    memory: float
    skills: float
    subagent: float
    episodes: int


@dataclass(frozen=True)
class PromotionRow:
    run_id: str
    generation: int
    proposal_id: str
    outcome: str  # promoted, or the rejection reason
    detail: str
    harness: str | None
    previous: str
    dev_delta: float | None
    test_delta: float | None
    motivated_by: list[str]
    rationale: str


@dataclass
class RoundsReport(Generic[M]):
    run_id: str
    rows: list[RoundRow] = field(default_factory=list)
    decisions: list[PromotionRow] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    failures: dict[int, int] = field(default_factory=dict)  # failure traces per generation
    model: M | None = None
    spec: Mapping[str, Any] = field(default_factory=dict)

    @property
    def promotions(self) -> list[PromotionRow]:
        return [d for d in self.decisions if d.outcome == "promoted"]

    def score(self, generation: int, condition: str, split: str) -> float:
        return next(r.overall for r in self.rows if (r.generation, r.condition, r.split)
                    == (generation, condition, split))

    def table(self) -> Table:
        """Per round and split: overall before, with the model alone changed, the harness
        alone, and both; and what was promoted."""
        table = Table(title=f"co-evolution rounds (run {self.run_id})")
        for column, justify in (("gen", "right"), ("split", "left"), ("before", "right"),
                                ("model alone", "right"), ("harness alone", "right"),
                                ("both", "right"), ("promoted", "left")):
            table.add_column(column, justify=justify)  # type: ignore[arg-type]
        for generation in sorted({r.generation for r in self.rows}):
            promoted = [d.proposal_id for d in self.promotions if d.generation == generation]
            for split in SPLITS:
                cells = [f"{self.score(generation, c, split):.3f}" for c in CONDITIONS]
                table.add_row(str(generation), split, *cells,
                              ", ".join(promoted) if split == "dev" and promoted else "")
        return table

    def write(self, folder: str | Path) -> dict[str, Path]:
        """rounds.parquet, decisions.parquet and events.parquet (every harness event and the
        failure traces they name: event_id, type, proposal_id, payload JSON) in `folder`."""
        target = Path(folder)
        target.mkdir(parents=True, exist_ok=True)
        paths = {}
        events = pa.Table.from_pylist([
            {"event_id": e.event_id, "type": e.type, "run_id": self.run_id,
             "proposal_id": getattr(e, "proposal_id", None),
             "payload": e.model_dump_json()} for e in self.events], schema=_EVENT_SCHEMA)
        pq.write_table(events, target / "events.parquet")
        paths["events"] = target / "events.parquet"
        for name, rows, schema in (("rounds", self.rows, _ROUND_SCHEMA),
                                   ("decisions", self.decisions, _DECISION_SCHEMA)):
            table = pa.Table.from_pylist([dataclasses.asdict(r) for r in rows], schema=schema)
            path = target / f"{name}.parquet"
            pq.write_table(table, path)
            paths[name] = path
        return paths


_ROUND_SCHEMA = pa.schema([
    ("run_id", pa.string()), ("generation", pa.int32()), ("condition", pa.string()),
    ("split", pa.string()), ("model", pa.string()), ("harness", pa.string()),
    ("overall", pa.float64()), *[(f, pa.float64()) for f in FAMILY_WEIGHTS],
    ("episodes", pa.int32()),
])
_EVENT_SCHEMA = pa.schema([
    ("event_id", pa.string()), ("type", pa.string()), ("run_id", pa.string()),
    ("proposal_id", pa.string()), ("payload", pa.string()),
])
_DECISION_SCHEMA = pa.schema([
    ("run_id", pa.string()), ("generation", pa.int32()), ("proposal_id", pa.string()),
    ("outcome", pa.string()), ("detail", pa.string()), ("harness", pa.string()),
    ("previous", pa.string()), ("dev_delta", pa.float64()), ("test_delta", pa.float64()),
    ("motivated_by", pa.list_(pa.string())), ("rationale", pa.string()),
])


def _scorer(score: Score[M]) -> Callable[[M, Mapping[str, Any], Split], Sequence[EpisodeScore]]:
    """Scores memoised per (model, harness version, split): runs are seeded, so equal keys
    give equal scores, and each cell of the table is run once."""
    cache: dict[str, CachedRunner] = {}

    def scored(model: M, spec: Mapping[str, Any], split: Split) -> Sequence[EpisodeScore]:
        runner = cache.setdefault(model.name, CachedRunner(lambda s, sp: score(model, s, sp)))
        return runner(spec, split)

    return scored


def _evolve_harness(state: EvolverState, model: M, generation: int, scored: Callable[..., Any],
                    config: RoundsConfig, evolver: EvolverConfig,
                    report: RoundsReport[M], emit: Callable[[Event], None],
                    registry: HarnessRegistry | None) -> EvolverState:
    """Proposes from this round's failures and gates each proposal with the new model.

    Event ids are scoped to the run: a proposal id is a content address (the same delta on the
    same base), and another run making the same proposal from its own failures must not be
    dropped by the archive as a repeat of this run's events."""

    def scoped(event: Event) -> Event:
        return event.model_copy(update={"event_id": derived_id(event.event_id, config.run_id)})

    tried = 0
    while tried < config.max_proposals:
        made = propose(state.spec, state.traces, state.successes, min_support=config.min_support,
                       exclude=frozenset(state.proposals))
        if not made:
            break
        p = made[0]
        tried += 1
        proposal = HarnessProposed(
            event_id=derived_id("harness.proposed", config.run_id, p.proposal_id),
            source=evolver.source, proposal_id=p.proposal_id, base_harness=p.base,
            changes=list(p.changes), motivated_by=list(p.motivated_by), rationale=p.rationale,
            correlation_id=config.run_id)
        state, out = handle(state, proposal, evolver)
        produced: list[Event] = [proposal, *map(scoped, out)]
        evaluated = evaluate_proposal(
            state.spec, proposal, lambda spec, split: scored(model, spec, split),
            suite_seed=config.suite_seed, tolerance=config.tolerance,
            resamples=config.resamples, source=evolver.source)
        for event in map(scoped, evaluated):
            state, out = handle(state, event, evolver)
            produced += [event, *map(scoped, out)]
        for event in produced:
            emit(event)
            report.events.append(event)
        report.decisions.append(_decision(config.run_id, generation, proposal, produced))
        promoted = next((e for e in produced if isinstance(e, HarnessPromoted)), None)
        if promoted is not None and registry is not None:
            registry.promote(state.spec, proposal_id=promoted.proposal_id)
    return state


def _decision(run_id: str, generation: int, proposal: HarnessProposed,
              produced: Iterable[Event]) -> PromotionRow:
    promoted = next((e for e in produced if isinstance(e, HarnessPromoted)), None)
    rejected = next((e for e in produced if isinstance(e, HarnessRejected)), None)
    deltas = {e.split: e.delta for e in produced if e.type == "harness.evaluated"}  # type: ignore[attr-defined]
    if promoted is not None:
        outcome, detail, harness = "promoted", "passed dev and held on test", promoted.harness
    elif rejected is not None:
        outcome, detail, harness = rejected.reason, rejected.detail, None
    else:
        outcome, detail, harness = "pending", "waiting out the veto window", None
    return PromotionRow(run_id=run_id, generation=generation,
                        proposal_id=proposal.proposal_id, outcome=outcome, detail=detail,
                        harness=harness, previous=proposal.base_harness,
                        dev_delta=deltas.get("dev"), test_delta=deltas.get("test"),
                        motivated_by=list(proposal.motivated_by), rationale=proposal.rationale)


class Rounds(Generic[M]):
    """The rounds one at a time, for a caller that owns the generation loop (`flywheel run`
    trains inside trainer.loop.run_generations and calls `round` after each generation).

    `round(generation, before, after, collected)` folds the new model's rollout events, emits
    every failure trace and harness event, gates this round's proposals with `after`,
    promotes the passing ones (into `registry` too) and scores the four cells."""

    def __init__(self, spec: Mapping[str, Any], *, score: Score[M],
                 config: RoundsConfig | None = None, emit: Callable[[Event], None] | None = None,
                 registry: HarnessRegistry | None = None) -> None:
        self.config = config or RoundsConfig()
        self.evolver = EvolverConfig(min_support=self.config.min_support,
                                     tolerance=self.config.tolerance)
        self.emit = emit or (lambda event: None)
        self.registry = registry
        self.scored = _scorer(score)
        self.report: RoundsReport[M] = RoundsReport(run_id=self.config.run_id)
        self.state = initial_state(spec)
        if registry is not None:
            registry.init(self.state.spec)

    @property
    def spec(self) -> Mapping[str, Any]:
        """The current harness (η after the last round)."""
        return self.state.spec

    def round(self, generation: int, before: M, after: M, collected: Iterable[Event]
              ) -> list[PromotionRow]:
        """One round (see the class docstring); returns this round's decisions."""
        state, report = self.state, self.report
        eta = state.spec
        state = dataclasses.replace(state, traces=())  # this round's failures only
        failures = 0
        for event in collected:
            state = evolve(state, event, self.evolver)
            if event.type == "failure.traced":
                failures += 1
                self.emit(event)
                report.events.append(event)  # kept so promotions trace back to them
        report.failures[generation] = failures
        logger.info("generation %d: %d failure traces", generation, failures)
        decided = len(report.decisions)
        state = _evolve_harness(state, after, generation, self.scored, self.config,
                                self.evolver, report, self.emit, self.registry)
        self.state = state
        new_eta = state.spec
        for condition, (model_new, harness_new) in CONDITIONS.items():
            m = after if model_new else before
            h = new_eta if harness_new else eta
            for split in SPLITS:
                scores = self.scored(m, h, split)
                overall, families = summarise(scores)
                report.rows.append(RoundRow(
                    run_id=self.config.run_id, generation=generation, condition=condition,
                    split=split, model=m.name, harness=spec_version(h),
                    overall=overall, episodes=len(scores), **families))
        report.model, report.spec = after, new_eta
        return report.decisions[decided:]


def run_rounds(model: M, spec: Mapping[str, Any], *, train: Train[M], collect: Collect[M],
               score: Score[M], config: RoundsConfig | None = None,
               emit: Callable[[Event], None] | None = None,
               registry: HarnessRegistry | None = None,
               on_round: Callable[[int, RoundsReport[M]], None] | None = None,
               ) -> RoundsReport[M]:
    """`config.generations` rounds from (model, spec); see the module docstring."""
    config = config or RoundsConfig()
    if config.generations < 1:
        raise ValueError(f"generations must be at least 1, got {config.generations}")
    rounds: Rounds[M] = Rounds(spec, score=score, config=config, emit=emit, registry=registry)
    theta = model
    for generation in range(1, config.generations + 1):
        new_theta = train(theta, generation)
        rounds.round(generation, theta, new_theta, collect(new_theta, rounds.spec, generation))
        theta = new_theta
        if on_round is not None:
            on_round(generation, rounds.report)
    rounds.report.model, rounds.report.spec = theta, rounds.spec
    return rounds.report


def plot_rounds(report: RoundsReport[Any], path: str | Path) -> Path:
    """The per-round table as a PNG: one panel per split, the overall score of each of the
    four cells (before, model alone, harness alone, both) per generation."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    generations = sorted({r.generation for r in report.rows})
    labels = {"before": "before", "model": "model alone", "harness": "harness alone",
              "both": "both"}
    fig, axes = plt.subplots(1, len(SPLITS), figsize=(8, 3), sharey=True)
    for ax, split in zip(axes, SPLITS, strict=True):
        for i, (condition, marker) in enumerate(zip(CONDITIONS, "osD^", strict=True)):
            shift = (i - 1.5) * 0.05  # side by side, so equal scores do not hide each other
            ax.plot([g + shift for g in generations],
                    [report.score(g, condition, split) for g in generations],
                    marker=marker, label=labels[condition])
        ax.set_title(split)
        ax.set_xlabel("generation")
        ax.set_xticks(generations)
        ax.set_ylim(-0.03, 1.03)
    axes[0].set_ylabel("overall score")
    axes[-1].legend(loc="best", fontsize=8)
    fig.suptitle(f"co-evolution rounds (run {report.run_id})", fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)
