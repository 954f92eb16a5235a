"""The harness half of each generation in `flywheel run --generations N`.

θ(k+1) = U_M(θ(k); ηk) is the trainer's step (trainer.loop.run_generations, in the registry's
current harness); after it,
η(k+1) = U_H(η(k); failures(θ(k+1), η(k))): the new checkpoint plays training-split tasks in
the current harness (the data dir's HarnessRegistry, what the rollout service wraps its
devices in), its failures become failure traces, the evolver proposes deltas, each goes
through the paired dev/test gate with the new checkpoint, and the passing ones are promoted
into the registry. One `services.evolver.rounds.Rounds` drives it, so the per-round table
(before / model alone / harness alone / both, on dev and test) comes out as in
`flywheel harness rounds`.

Sizing (a fresh 2-core machine with the tiny model): `templates` templates that serve train,
dev and test alike, chosen each generation by the new checkpoint's dev score per template (those
it solves sometimes first, then those it fails; never one it always solves, where no harness
change can show: `competence_templates`), or sampled with the run's seed when it was not scored
per template or `by_competence` is off; `n_per_template` seeded instances each, at most
`max_steps` steps per model episode and `max_proposals` gated proposals per generation. Skills and playbook lines are distilled from the oracle's solved
episodes of the same training tasks (the data phase's rollout policy): a weak model has few
successes of its own to distil from.

Every failure trace and harness event goes to `emit` (the training phase's typed producer,
so the archiver stores them). The tables go to `<data dir>/rounds/<run id>/`
(rounds.parquet, decisions.parquet, events.parquet, rounds.png), rewritten after each round.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from schemas.envelope import Event

__all__ = ["CheckpointModel", "HarnessRoundConfig", "HarnessRounds", "competence_templates", "round_templates"]

logger = logging.getLogger(__name__)

#: Templates the summary names; more are counted.
MAX_NAMED = 6


@dataclass(frozen=True)
class HarnessRoundConfig:
    """How big each generation's harness round is (`flywheel run --evolve-*`)."""

    enabled: bool = True
    templates: int = 3
    n_per_template: int = 2
    max_proposals: int = 2
    max_steps: int = 4
    max_new_tokens: int = 96
    seed: int = 0
    names: tuple[str, ...] = ()  # these templates instead of `templates` sampled ones
    # pick each round's templates by the new checkpoint's dev scores (competence_templates)
    # instead of by seed alone: a harness change can only show on templates the model fails
    by_competence: bool = True
    batch_size: int = 64  # model episodes decoded together in the gate's runs (1: one at a time)
    dtype: str | None = None  # the checkpoints' weights (trainer.policy.load_policy's dtype)

    def describe(self) -> str:
        count = (f"{len(self.names) if self.names else self.templates} template(s)"
                 if self.names or self.templates else "every template")
        return (f"{count} × {self.n_per_template} instance(s) per split, "
                f"≤ {self.max_steps} steps per episode, ≤ {self.max_proposals} gated "
                f"proposal(s) per generation")


def _common_templates() -> list[str]:
    """Template names that serve train, dev and test (failures on train, the gate on dev, the
    hold-out on test see the same templates)."""
    from devices.suite.registry import templates_for

    names = [{t.name for t in templates_for(split)} for split in ("train", "dev", "test")]
    return sorted(names[0] & names[1] & names[2])


def round_templates(k: int, seed: int) -> list[str]:
    """`k` template names that serve train, dev and test, sampled with `seed`; all when k is 0."""
    common = _common_templates()
    if k <= 0 or k >= len(common):
        return common
    return sorted(random.Random(seed).sample(common, k))


def competence_templates(scores: dict[str, float], k: int, seed: int) -> list[str]:
    """`k` templates serving train, dev and test, chosen by a checkpoint's dev score per template
    (`scores`, EvalSummary.templates): first those it solves sometimes (0 < s < 1, nearest 0.5
    first: a harness change moves them most easily), then those it scored 0 on (seeded order),
    never one it always solves (nothing left to gain). Templates it was not scored on fill the
    rest in `round_templates`' seeded order. All unsolved ones when k is 0."""
    common = _common_templates()
    scored = {t: scores[t] for t in common if t in scores}
    partly = sorted((t for t, s in scored.items() if 0.0 < s < 1.0), key=lambda t: (abs(scored[t] - 0.5), t))
    failed = [t for t, s in scored.items() if s == 0.0]
    unscored = [t for t in common if t not in scored]
    random.Random(seed).shuffle(failed)
    random.Random(seed).shuffle(unscored)
    ranked = partly + failed + unscored
    return sorted(ranked if k <= 0 else ranked[:k])


@dataclass
class CheckpointModel:
    """A model side of the rounds: a checkpoint (or the base model) directory, loaded once."""

    name: str
    path: Path
    max_new_tokens: int = 96
    load: Callable[[Path], Any] | None = None  # default: trainer.policy.load_policy
    dtype: str | None = None  # for the default load
    _policy: Any = field(default=None, repr=False)

    def policy(self) -> Any:
        if self._policy is None:
            if self.load is not None:
                self._policy = self.load(self.path)
            else:
                from trainer.policy import load_policy

                self._policy = load_policy(self.path, max_new_tokens=self.max_new_tokens, dtype=self.dtype)
        return self._policy

    def release(self) -> None:
        self._policy = None


class HarnessRounds:
    """Runs one harness round after each trained generation (see the module docstring)."""

    def __init__(self, data_dir: Path, config: HarnessRoundConfig, *, run_id: str,
                 base_model: Path, emit: Callable[[Event], None] | None = None,
                 console: Console | None = None,
                 load: Callable[[Path], Any] | None = None) -> None:
        """`load` turns a checkpoint directory into a policy (default: trainer.policy's
        load_policy); tests pass a scripted one."""
        from devices.suite.policies import OraclePolicy
        from services.dataflow.registry import HarnessRegistry
        from services.evolver.rounds import Rounds, RoundsConfig
        from services.evolver.suite_runner import suite_collector, suite_runner

        self.config = config
        self.console = console or Console(stderr=True)
        self.registry = HarnessRegistry.at_data_dir(data_dir)
        self.folder = Path(data_dir) / "rounds" / run_id
        self.load = load
        # One list for the whole run: the scorer and the collector read it at each round, and a
        # competence pick (after_generation) replaces its contents in place.
        self.templates = (sorted(config.names) if config.names
                          else round_templates(config.templates, config.seed))
        self.picked: dict[int, str] = {}  # per generation: how its templates were chosen
        self.started_from = self.registry.current_spec().to_json_dict()
        self.error: str | None = None
        self.seconds: dict[int, float] = {}
        self.paths: dict[str, Path] = {}
        self.runs = 0  # suite runs (model × harness × split) scored so far
        self.stop: threading.Event | None = None  # the run's stop: checked before each suite run

        def score(model: CheckpointModel, spec: Any, split: Any) -> Any:
            from trainer.stopping import check_stop

            check_stop(self.stop, "during a harness round")
            from trainer.progress import PHASES

            PHASES.start("harness round", None, "suite runs scored")
            PHASES.update(self.runs)
            started = time.monotonic()
            scores = suite_runner(model.policy, n_per_template=config.n_per_template,
                                  suite_seed=config.seed, templates=self.templates,
                                  max_steps=config.max_steps, batch_size=config.batch_size)(spec, split)
            self.runs += 1
            self.console.print(  # progress: each (model, harness, split) runs once
                f"  {model.name} in harness {str(spec.get('version', ''))[:12]} on {split}: "
                f"{sum(s.score for s in scores):.1f}/{len(scores)} "
                f"({time.monotonic() - started:.0f} s)", style="dim", highlight=False)
            return scores

        self.rounds: Rounds[CheckpointModel] = Rounds(
            self.started_from, score=score, emit=emit, registry=self.registry,
            config=RoundsConfig(max_proposals=config.max_proposals, suite_seed=config.seed,
                                run_id=run_id))
        self.collect = suite_collector(
            split="train", n_per_template=config.n_per_template, suite_seed=config.seed,
            templates=self.templates, run_id=run_id, max_steps=config.max_steps,
            demonstrations=OraclePolicy)
        self.previous = CheckpointModel(f"base:{Path(base_model).name}", Path(base_model),
                                        config.max_new_tokens, load, config.dtype)

    @property
    def report(self) -> Any:
        return self.rounds.report

    def after_generation(self, summary: Any) -> None:
        """The harness round on generation `summary.generation`'s checkpoint. A failure is
        reported (and ends the rounds) without stopping the training."""
        if self.error is not None:
            return
        generation = summary.generation
        new = CheckpointModel(summary.checkpoint_id, Path(summary.checkpoint_dir),
                              self.config.max_new_tokens, self.load, self.config.dtype)
        self.pick_templates(generation, getattr(getattr(summary, "evaluation", None), "templates", None) or {})
        self.console.print(f"[bold]generation {generation}[/bold]: harness round on "
                           f"{summary.checkpoint_id} in harness {self.rounds.spec['version'][:12]}"
                           f" ({self.config.describe()})", highlight=False)
        started = time.monotonic()
        try:
            decisions = self.rounds.round(generation, self.previous, new,
                                          self.collect(new, self.rounds.spec, generation))
            self.paths = self.report.write(self.folder)
            from services.evolver.rounds import plot_rounds

            self.paths["plot"] = plot_rounds(self.report, self.folder / "rounds.png")
        except Exception as error:
            from trainer.stopping import TrainingStopped

            if isinstance(error, TrainingStopped):  # a stop, not a failure: the run ends here
                self.report.rows[:] = [r for r in self.report.rows if r.generation != generation]
                raise
            self.error = f"generation {generation}: {type(error).__name__}: {error}"
            logger.exception("the harness round failed")
            # a half-scored round is left out of the table (its decisions stay reported)
            self.report.rows[:] = [r for r in self.report.rows if r.generation != generation]
            self.console.print(f"[red]harness round failed[/] ({self.error}); no further rounds",
                               highlight=False)
            return
        finally:
            self.seconds[generation] = time.monotonic() - started
        self.previous.release()  # θk is scored for the last time in this round
        self.previous = new
        promoted = [d for d in decisions if d.outcome == "promoted"]
        self.console.print(
            f"generation {generation}: {self.report.failures.get(generation, 0)} failure "
            f"traces, {len(decisions)} proposal(s), {len(promoted)} promoted "
            f"({self.seconds[generation]:.0f} s)", highlight=False)

    def pick_templates(self, generation: int, scores: dict[str, float]) -> None:
        """This round's templates: by the new checkpoint's dev scores (competence_templates) when
        the config asks for it and names none; otherwise the seeded sample stays."""
        if self.config.names or not self.config.by_competence or not scores:
            self.picked[generation] = "named" if self.config.names else "seeded sample"
            return
        self.templates[:] = competence_templates(scores, self.config.templates, self.config.seed)
        self.picked[generation] = "by dev score: " + ", ".join(
            f"{t} {f'{scores[t]:.2f}' if t in scores else 'unscored'}" for t in self.templates)
        self.console.print(f"generation {generation}: harness round templates {self.picked[generation]}",
                           highlight=False)

    # ---- reporting ---------------------------------------------------------------------------
    def summary_rows(self) -> list[tuple[str, str]]:
        shown = ", ".join(self.templates[:MAX_NAMED])
        if len(self.templates) > MAX_NAMED:
            shown += f" and {len(self.templates) - MAX_NAMED} more"
        rows = [("harness rounds", (f"{self.config.describe()}; templates {shown}; skills "
                                    "distilled from the oracle's solved train episodes"))]
        report = self.report
        for generation in sorted(report.failures):
            if not any(r.generation == generation for r in report.rows):
                continue
            cells = "; ".join(
                f"{split} " + " / ".join(f"{report.score(generation, c, split):.3f}"
                                         for c in ("before", "model", "harness", "both"))
                for split in ("dev", "test"))
            decided = [d for d in report.decisions if d.generation == generation]
            outcomes = ", ".join(f"{d.proposal_id} {d.outcome}" for d in decided) or "none"
            rows.append((f"harness round {generation}",
                         (f"templates {self.picked.get(generation, 'seeded sample')}; "
                          f"before / model alone / harness alone / both: {cells}; "
                          f"{report.failures[generation]} failure traces; proposals: "
                          f"{outcomes}; {self.seconds.get(generation, 0):.0f} s")))
        current = self.registry.current()
        moved = current != self.started_from.get("version")
        rows.append(("harness now", f"{current} ({'promoted this run' if moved else 'unchanged'})"))
        if self.paths:
            rows.append(("rounds table", (f"{self.paths['rounds']} (+ decisions, events, "
                                          f"plot {self.paths.get('plot', '')})")))
        if self.error is not None:
            rows.append(("[red]harness round failed[/]", self.error))
        return rows

    def table(self) -> Table | None:
        return self.report.table() if self.report.rows else None
