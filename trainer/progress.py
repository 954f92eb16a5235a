"""Which training phase runs now and how far it is: the one board `flywheel run`'s status reads.

Training runs in the run's own process, so its stages report here instead of printing: SFT and
GRPO after every optimiser step (a TrainerCallback from `step_callback`), the evaluation after
every episode, a harness round after every suite run. `PHASES.line()` is one status line, e.g.
`phase: SFT (generation 1) ▕██████░░░░░░░░░░▏ 12/40 steps`. Reading and writing are thread-safe
(training runs in a worker thread while the status line is drawn).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

__all__ = ["PHASES", "PhaseBoard", "phase_text", "step_callback"]

BAR_WIDTH = 16


@dataclass(frozen=True)
class Phase:
    name: str
    done: int
    total: int | None
    unit: str


class PhaseBoard:
    """The current phase (data, SFT, GRPO, eval, harness round) and its progress."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._phase: Phase | None = None

    def start(self, name: str, total: int | None = None, unit: str = "steps") -> None:
        with self._lock:
            self._phase = Phase(name, 0, total, unit)

    def update(self, done: int, total: int | None = None) -> None:
        with self._lock:
            if self._phase is not None:
                self._phase = Phase(self._phase.name, done,
                                    total if total is not None else self._phase.total, self._phase.unit)

    def advance(self, n: int = 1) -> None:
        with self._lock:
            if self._phase is not None:
                self._phase = Phase(self._phase.name, self._phase.done + n, self._phase.total, self._phase.unit)

    def clear(self) -> None:
        with self._lock:
            self._phase = None

    @property
    def current(self) -> Phase | None:
        with self._lock:
            return self._phase

    def line(self) -> str:
        """`phase: NAME ▕███░░░▏ done/total unit`, or '' when no phase runs."""
        phase = self.current
        return "" if phase is None else phase_text(phase.name, phase.done, phase.total, phase.unit)


def phase_text(name: str, done: int, total: int | None, unit: str = "steps") -> str:
    """`phase: NAME ▕███░░░▏ done/total unit`; without a total, `phase: NAME (done unit)`."""
    if not total:
        return f"phase: {name} ({done} {unit})"
    filled = min(BAR_WIDTH, round(BAR_WIDTH * done / total))
    bar = "█" * filled + "░" * (BAR_WIDTH - filled)
    return f"phase: {name} ▕{bar}▏ {min(done, total)}/{total} {unit}"


#: The process's board (training stages write it, `flywheel run`'s status line reads it).
PHASES = PhaseBoard()


def step_callback(name: str, board: PhaseBoard = PHASES) -> Any:
    """A TrainerCallback that shows `name` on `board` with the trainer's step out of max steps."""
    from transformers import TrainerCallback

    class ShowSteps(TrainerCallback):
        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            board.start(name, state.max_steps or None)
            board.update(state.global_step)
            return control

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            board.update(state.global_step, state.max_steps or None)
            return control

    return ShowSteps()
