"""Training examples from a trajectory: one per step, the context the policy saw as the prompt
and the action it took as the completion (the planner's answer format).

`recorded_pairs` builds them from the rollout's record (`EpisodeEnded.context`, the header the
policy was shown, plus the recorded steps) with the one renderer, devices.harness.context: no
simulator runs. `rebuilt_pairs` serves episodes recorded before the record existed: it resets a
harness to the task for the header (the catalogue and first screen), then renders the recorded
steps the same way; nothing is replayed. `correction_pairs` is the one place the sim still runs
for training data: the oracle's continuation from a failed episode's state does not exist yet.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from devices.harness.answer import format_action
from devices.harness.context import CONTEXT_VERSION, episode_messages
from schemas.episodes import Step

__all__ = [
    "CONTEXT_VERSION",
    "correction_pairs",
    "pairs_from_header",
    "rebuilt_pairs",
    "recorded_pairs",
    "trained_steps",
]

logger = logging.getLogger(__name__)


def pairs_from_header(header: str, steps: list[Step]) -> list[tuple[str, str]]:
    """(prompt, completion) per step: the chat before the step (header and earlier steps, as JSON
    messages) and the step's action in the answer format."""
    chat = episode_messages(header, [(s.action, s.observation) for s in steps])  # rendered once
    return [(json.dumps(chat[:1 + 2 * i], ensure_ascii=False), format_action(step.action))
            for i, step in enumerate(steps)]


def trained_steps(episode: Any) -> int:
    """How many rows an episode gives: its steps but the rollout's deliberate slips
    (`Step.target` False), which stay in the later rows' history and are never taught."""
    return sum(1 for step in episode.steps if step.target)


def recorded_pairs(episode: Any) -> list[tuple[str, str]] | None:
    """The rows of an episode whose rollout recorded its context; None when it did not."""
    if not episode.context or episode.context_version != CONTEXT_VERSION:
        return None
    return pairs_from_header(episode.context, episode.steps)


def rebuilt_pairs(task: Any, steps: list[Step], harness: Any) -> list[tuple[str, str]]:
    """The rows of an episode recorded without its context: the header from `harness` reset to
    `task` (no action is replayed), the steps as recorded."""
    harness.reset(task)
    return pairs_from_header(harness.context_header(), steps)


def correction_pairs(task: Any, steps: list[Step], first_wrong: int, harness: Any,
                     ) -> tuple[int, list[tuple[str, str]]] | None:
    """The oracle's continuation from the failing state as (context, action) pairs, and the
    step it starts at: first after the wrong step (teaching recovery), else instead of it.
    None when the oracle cannot finish the task from either state."""
    from devices.harness.episode import play
    from devices.suite.scoring import score_final_state
    from services.dataflow.tasks import ScriptedOracle

    for start in (first_wrong + 1, first_wrong):
        if start > len(steps) or (start > 0 and steps[start - 1].action.action_type == "finish"):
            continue
        oracle = ScriptedOracle()
        oracle.prepare(task)
        policy = _Resumed([step.action for step in steps[:start]], oracle)
        pairs: list[tuple[str, str]] = []

        def record(index: int, _observation: Any, action: Any, start: int = start,
                   pairs: list[tuple[str, str]] = pairs) -> None:
            if index >= start:  # the oracle's own steps, not the replayed ones
                pairs.append((harness.context(), format_action(action)))

        try:
            played = play(harness, task, policy, on_step=record)
        except (LookupError, ValueError, RuntimeError):
            continue  # the state misleads the oracle: no continuation from here
        played.checked()
        if pairs and score_final_state(task, harness.final_state()).score >= 1.0:
            return start, pairs
    return None


class _Resumed:
    """Replays a failed episode's first actions, then hands the episode to the oracle, which
    begins (goal and catalogue) only then, so its first look is at the state they left."""

    def __init__(self, prefix: list[Any], oracle: Any) -> None:
        self.prefix, self.oracle = list(prefix), oracle
        self.name = "oracle"
        self._begin: tuple[str, Any] | None = None

    def begin(self, goal: str, catalogue: Any) -> None:
        self._begin = (goal, catalogue)

    def next_action(self, observation: Any) -> Any:
        if self.prefix:
            return self.prefix.pop(0)
        if self._begin is not None:
            self.oracle.begin(*self._begin)
            self._begin = None
        return self.oracle.next_action(observation)
