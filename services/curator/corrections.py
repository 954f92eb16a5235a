"""Failures into the model side: a failure trace plus the suite oracle's continuation from the
failing state becomes correction rows, and a snapshot takes them at a configured share.

`continuation` is the conversion (the oracle replayed on a deterministic sim from the first
wrong step, `services.curator.examples.correction_pairs`); a trace it cannot continue is
`Skipped` with a reason that is logged, never an exception out of the curator. `usable_rows`
is what a snapshot can hold at a share: every admitted demonstration step plus at most the
corrections that make up `share` of the result (`services.dataflow.corrections`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from devices.protocol import DeviceError
from schemas.episodes import EpisodeEnded
from schemas.tasks import TaskProposed
from schemas.verdicts import FailureTraced
from services.curator.examples import correction_pairs
from services.dataflow.corrections import DEFAULT_SHARE, corrections_needed

__all__ = ["DEFAULT_SHARE", "Continuation", "Skipped", "continuation", "usable_rows"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Continuation:
    """The oracle's (context, action JSON) pairs from step `start` of the failed episode."""

    start: int
    pairs: list[tuple[str, str]]


@dataclass(frozen=True)
class Skipped:
    """A failure trace that yields no correction, and why (one sentence)."""

    reason: str


def continuation(task: TaskProposed, episode: EpisodeEnded, failure: FailureTraced,
                 harness: Any) -> Continuation | Skipped:
    """The oracle's continuation of `episode` from its first wrong step, replayed in `harness`
    (a Harness around a SimPhone), or why there is none. Logs every skip with the failure's
    event id."""
    if failure.environment_fault:
        found: Continuation | Skipped = Skipped("the environment, not the policy, failed")
    elif failure.step_index is None:
        found = Skipped("the trace names no first wrong step")
    elif failure.step_index >= len(episode.steps):
        found = Skipped(f"its first wrong step {failure.step_index} is past the episode's "
                        f"{len(episode.steps)} steps")
    else:
        from services.dataflow.tasks import instance_of

        try:
            pairs = correction_pairs(instance_of(task), episode.steps, failure.step_index,
                                     harness)
        except (DeviceError, LookupError, ValueError, RuntimeError, TypeError) as error:
            found = Skipped(f"replaying it failed ({type(error).__name__}: {error})")
        else:
            found = (Skipped("the oracle cannot finish the task from the failing state")
                     if pairs is None else Continuation(*pairs))
    if isinstance(found, Skipped):
        logger.info("failure %s (episode %s) gives no correction: %s", failure.event_id,
                    episode.episode_id, found.reason)
    return found


def usable_rows(demonstration_rows: int, correction_rows: int,
                share: float = DEFAULT_SHARE) -> int:
    """Rows a snapshot can hold: all demonstrations and the corrections that make up at most
    `share` of the total."""
    return demonstration_rows + min(correction_rows,
                                    corrections_needed(demonstration_rows, share))
