"""The step budget every phone keeps: a step counter, the phone's clock, and done at the cap."""

from __future__ import annotations

from typing import Protocol

__all__ = ["StepCounter", "spend_step"]


class StepCounter(Protocol):
    """What a phone keeps per episode (SimState, AdbPhone): the step, the clock, done, the cap."""

    step: int
    clock_ms: int
    done: bool
    max_steps: int


def spend_step(counter: StepCounter, step_ms: int) -> int:
    """Spends one step (counter and clock; done at the cap) with no other effect — what a phone
    does when the harness ran an action of its own. Nothing once done. Returns the step."""
    if counter.done:
        return counter.step
    counter.step += 1
    counter.clock_ms += step_ms
    if counter.step >= counter.max_steps:
        counter.done = True
    return counter.step
