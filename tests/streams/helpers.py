"""Event builders and a bounded drain loop shared by the streams tests."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from schemas.actions import Click
from schemas.episodes import EpisodeEnded, Step
from schemas.observations import Observation
from schemas.verdicts import VerdictIssued
from streams.consumer import Record, TypedBatchConsumer

__all__ = ["DRAIN_DEADLINE_S", "drain", "episode", "verdict"]

#: Upper bound for waiting on a real broker (the first JoinGroup alone takes ~3 s); a
#: safety net against hangs, not a speed assertion.
DRAIN_DEADLINE_S = 60.0


def verdict(i: int = 0, **overrides: Any) -> VerdictIssued:
    fields: dict[str, Any] = {
        "source": "test/0", "correlation_id": "run-1", "episode_id": f"ep-{i}",
        "task_id": "task-1", "checker": "final_state", "score": 0.5, "passed": False,
    }
    return VerdictIssued(**{**fields, **overrides})


def episode(i: int = 0, steps: int = 1) -> EpisodeEnded:
    return EpisodeEnded(
        source="test/0", correlation_id="run-1", episode_id=f"ep-{i}", task_id="task-1",
        device_id="sim-0", environment="sim", policy="scripted", outcome="finished",
        steps=[Step(index=n, action=Click(index=n), observation=Observation(step=n + 1,
                                                                          clock_ms=1000 * n))
               for n in range(steps)],
    )


def drain(consumer: TypedBatchConsumer, expected: int, *, dead_letters: int = 0,
          commit: bool = True, alive: Callable[[], bool] = lambda: True) -> list[Record]:
    """Polls until `expected` valid records and `dead_letters` dead letters were seen (or
    `alive()` turns false, e.g. the worker process under test died)."""
    got: list[Record] = []
    deadline = time.monotonic() + DRAIN_DEADLINE_S
    while (len(got) < expected or consumer.dead_lettered < dead_letters) \
            and time.monotonic() < deadline and alive():
        got.extend(consumer.poll_batch(timeout_ms=500))
        if commit:
            consumer.commit()
    return got
