"""Stopping a training run between steps, and resuming it where it stopped.

`flywheel run` hands its stop event (set by Ctrl-C or SIGTERM) down to SFT, GRPO and the
evaluation. `stop_callback(stop)` is a TrainerCallback that ends training at the next step (or
gradient-accumulation substep) once the event is set and has the trainer write a full
checkpoint there (weights, optimizer, scheduler, RNG, step) under `<out>/trainer_state/`;
the stage then raises `TrainingStopped`. A later call with the same output folder finds that
checkpoint (`resume_point`) and continues from its step instead of starting again.
(`stop_callback` builds the callback; transformers is imported only then.)
"""

from __future__ import annotations

import logging
import re
import shutil
import threading
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

__all__ = ["TrainingStopped", "check_stop", "clear_resume_points", "resume_point", "stop_callback",
           "train_resumably"]

_STEP_DIR = re.compile(r"^checkpoint-(\d+)$")


class TrainingStopped(RuntimeError):
    """Training was asked to stop; `resume_from` holds the checkpoint a rerun continues from
    (None when it stopped between stages, where nothing was half done)."""

    def __init__(self, message: str, resume_from: Path | None = None, step: int = 0) -> None:
        super().__init__(message)
        self.resume_from = resume_from
        self.step = step


def stop_callback(stop: threading.Event) -> Any:
    """A TrainerCallback that ends training at the next step (or substep) once `stop` is set
    and has the trainer save a resumable checkpoint there; `.stopped_at` is that step."""
    from transformers import TrainerCallback

    class StopOnEvent(TrainerCallback):
        def __init__(self) -> None:
            self.stopped_at: int | None = None

        def _check(self, state: Any, control: Any) -> Any:
            if stop.is_set():
                control.should_training_stop = True
                control.should_save = True
                self.stopped_at = state.global_step
            return control

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            return self._check(state, control)

        def on_substep_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            return self._check(state, control)

    return StopOnEvent()


def check_stop(stop: threading.Event | None, where: str) -> None:
    """Raises TrainingStopped when `stop` is set (between stages, episodes or batches)."""
    if stop is not None and stop.is_set():
        raise TrainingStopped(f"training stopped {where}")


def resume_point(out_dir: Path) -> Path | None:
    """The newest step checkpoint a stopped stage left in `out_dir` (None: start afresh)."""
    state_dir = Path(out_dir) / "trainer_state"
    steps = [(int(m.group(1)), p) for p in state_dir.glob("checkpoint-*")
             if p.is_dir() and (m := _STEP_DIR.match(p.name))]
    return max(steps)[1] if steps else None


def clear_resume_points(out_dir: Path) -> None:
    """Removes the step checkpoints of a stage that has now finished (they are for resuming it)."""
    for path in (Path(out_dir) / "trainer_state").glob("checkpoint-*"):
        shutil.rmtree(path, ignore_errors=True)


def train_resumably(trainer: Any, out_dir: Path, stop: threading.Event | None, stage: str) -> tuple[Any, float]:
    """(train output, seconds) of `trainer.train()` resumed from the step checkpoint a stopped
    run left in `out_dir`; a set `stop` ends it at the next step with TrainingStopped naming
    where the next run resumes; a finished stage clears its resume points."""
    import time

    from trainer.progress import step_callback

    trainer.add_callback(step_callback(stage))  # the run's status line shows the step
    watcher = stop_callback(stop) if stop is not None else None
    if watcher is not None:
        trainer.add_callback(watcher)
    resume = resume_point(out_dir)
    if resume is not None:
        logger.info("%s resumes from %s", stage, resume)
    started = time.monotonic()
    output = trainer.train(resume_from_checkpoint=str(resume) if resume is not None else None)
    seconds = time.monotonic() - started
    state = trainer.state
    if watcher is not None and watcher.stopped_at is not None and state.global_step < state.max_steps:
        saved = resume_point(out_dir)
        raise TrainingStopped(f"{stage} stopped at step {state.global_step} of {state.max_steps}; "
                              f"the next run resumes from {saved}", saved, state.global_step)
    clear_resume_points(out_dir)
    return output, seconds
