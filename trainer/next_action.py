"""Teacher-forced next-action accuracy: a cheap progress signal beside episode success.

The oracle plays each task; before each of its steps the policy is asked for the next action on
exactly the prompt it would see there (the one context), and its answer is compared with the
oracle's action. The oracle's action is then what happens, so one early mistake does not hide
every later step: a model that has learned the format and most lookups shows progress here long
before whole episodes succeed.

A greedy, unconstrained model (the learning run's) is asked teacher-forced: one forward pass over the
prompt and the oracle's answer tells whether greedy decoding would write exactly that answer
(`ModelPolicy.writes_exactly`), instead of decoding an answer and parsing it — a few hundred times
cheaper for a model that rambles to its token cap. It counts the oracle's exact text (the format
SFT teaches); an answer written differently that parses to the same action is a hit only when
decoded. Invalid answers are counted only when decoded (`invalid` is None otherwise).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from devices.harness.answer import format_action

__all__ = ["NextActionScore", "next_action_accuracy"]

logger = logging.getLogger(__name__)


@dataclass
class NextActionScore:
    """Exact next actions out of oracle steps, overall and per action type; invalid answers counted."""

    correct: int = 0
    steps: int = 0
    invalid: int | None = 0  # None: teacher-forced, nothing was decoded
    by_action: dict[str, list[int]] = field(default_factory=dict)  # action type -> [correct, steps]

    @property
    def accuracy(self) -> float:
        return self.correct / self.steps if self.steps else 0.0

    def to_json_dict(self) -> dict[str, Any]:
        return {"accuracy": self.accuracy, "correct": self.correct, "steps": self.steps, "invalid": self.invalid,
                "by_action": {k: {"correct": c, "steps": n} for k, (c, n) in sorted(self.by_action.items())}}


def next_action_accuracy(policy: Any, tasks: Sequence[Any], *, spec: Any = None) -> NextActionScore:
    """How often `policy` (a trainer.policy.ModelPolicy) answers the oracle's exact next action on
    `tasks`, teacher-forced: the oracle's action is executed after each question (and, for a greedy
    unconstrained policy, asked in one forward pass; see the module's docstring)."""
    from devices.harness import Harness
    from devices.harness.answer import InvalidAction, parse_completion
    from devices.harness.episode import Alongside, play
    from devices.sim import SimPhone
    from devices.suite.policies import OraclePolicy

    score = NextActionScore()

    forced = bool(getattr(policy, "forced_checks", False))
    if forced:
        score.invalid = None

    def ask(_index: int, observation: Any, expected: Any) -> None:
        ids = policy.prompt_ids(policy.prompt_messages(observation))
        if forced:
            hit = policy.writes_exactly(ids, format_action(expected))
        else:
            schemas = [policy.answer_schema()] if policy.constrained else None
            answer = parse_completion(policy.generate_batch([ids], schemas)[0])
            hit = not isinstance(answer, InvalidAction) and answer == expected
            score.invalid += isinstance(answer, InvalidAction)
        score.correct += hit
        score.steps += 1
        tally = score.by_action.setdefault(expected.action_type, [0, 0])
        tally[0] += hit
        tally[1] += 1
        policy.accept(format_action(expected))  # teacher forcing: the oracle's step happens

    harness = Harness(SimPhone(), spec)
    try:
        for task in tasks:
            oracle = OraclePolicy()
            oracle.prepare(task)  # the privileged expert knows the task; the questioned policy does not
            play(harness, task, Alongside(oracle, policy), on_step=ask)
    finally:
        harness.close()
    return score

