"""Failure tracing: the first wrong step of a failed episode and its taxonomy category.

The reference is the oracle's trajectory for the same task on a fresh sim (deterministic).
The episode's actions are compared with it step by step; the first difference is the first
wrong step and its kind decides the category. Environment faults (device lost, timeouts,
injected app crashes) are recognised first and kept apart from policy failures.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from devices.protocol import TaskInstance
from schemas.episodes import EpisodeEnded
from services.dataflow.tasks import oracle_actions

__all__ = ["ENVIRONMENT_ERROR_CODES", "LOOP_REPEATS", "Trace", "environment_fault", "trace"]

logger = logging.getLogger(__name__)

#: Tool error codes that come from the environment (sim faults, a lost device), not the policy.
ENVIRONMENT_ERROR_CODES = frozenset({"transient", "app_crashed", "device_lost", "timeout"})
#: The same action this many times in a row is a loop.
LOOP_REPEATS = 3
#: Tools whose name says they only read (a missed one is a missed lookup).
_READ_WORDS = ("get", "list", "search", "find", "read", "lookup", "query", "show", "check")


@dataclass(frozen=True)
class Trace:
    category: str
    step_index: int | None
    summary: str
    evidence: dict[str, Any]
    environment_fault: bool


def environment_fault(episode: EpisodeEnded) -> str | None:
    """Why the environment, not the policy, spoilt the episode (None when it did not)."""
    if episode.outcome in ("device_failed", "timeout"):
        return episode.failure or f"the episode ended as {episode.outcome}"
    if episode.final_state is None:
        return "the device's final state was not stored"
    for step in episode.steps:
        result = step.observation.result
        if result is not None and result.error is not None \
                and result.error.code in ENVIRONMENT_ERROR_CODES:
            return f"step {step.index}: {result.error.code}: {result.error.message}"
    return None


def _canon(action: Any) -> dict[str, Any]:
    data = action.model_dump(mode="json") if hasattr(action, "model_dump") else dict(action)
    return json.loads(json.dumps(data, sort_keys=True))


def _name(action: dict[str, Any]) -> str:
    return str(action.get("name") or action.get("skill") or action.get("agent")
               or action.get("action_type"))


def _is_read(name: str) -> bool:
    tail = name.rsplit(".", 1)[-1].lower()
    return any(tail.startswith(word) for word in _READ_WORDS)


def trace(task: TaskInstance, episode: EpisodeEnded, phone: Any, *,
          violations: list[str] | None = None) -> Trace:
    """The category and first wrong step of a failed `episode` of `task`."""
    fault = environment_fault(episode)
    if fault is not None:
        return Trace("environment_fault", None, fault, {"outcome": episode.outcome}, True)
    taken = [_canon(step.action) for step in episode.steps]
    reference = [_canon(a) for a in oracle_actions(task, phone)[0]]
    for i in range(len(taken) - LOOP_REPEATS + 1):
        window = taken[i:i + LOOP_REPEATS]
        if all(a == window[0] for a in window):
            return Trace("loop", i, f"the same {_name(window[0])} action {LOOP_REPEATS} times "
                         f"in a row from step {i}", {"action": window[0]}, False)
    for i, (got, want) in enumerate(zip(taken, reference)):
        if got == want:
            continue
        evidence = {"taken": got, "expected": want}
        kind, expected_kind = got.get("action_type"), want.get("action_type")
        if kind == "finish" or (kind == "answer" and expected_kind != "answer"):
            return Trace("premature_finish", i, f"step {i} finished before the task was done",
                         evidence, False)
        if expected_kind in ("memory_read", "memory_write") or kind in ("memory_read",
                                                                       "memory_write"):
            return Trace("memory_miss", i, f"step {i}: {kind} instead of {expected_kind} "
                         f"{_name(want)}", evidence, False)
        if expected_kind == "use_skill" or kind == "use_skill":
            return Trace("wrong_skill", i, f"step {i}: {_name(got)} instead of skill "
                         f"{_name(want)}", evidence, False)
        if expected_kind == "delegate" or kind == "delegate":
            return Trace("bad_delegation", i, f"step {i}: {_name(got)} instead of delegating "
                         f"to {_name(want)}", evidence, False)
        if kind == expected_kind and _name(got) == _name(want):
            return Trace("wrong_arguments", i, f"step {i}: {_name(got)} with the wrong "
                         "arguments", evidence, False)
        if expected_kind == "tool_call" and _is_read(_name(want)) and not _is_read(_name(got)):
            return Trace("missed_lookup", i, f"step {i} acted without first looking up with "
                         f"{_name(want)}", evidence, False)
        return Trace("wrong_tool", i, f"step {i}: {_name(got)} instead of {_name(want)}",
                     evidence, False)
    if violations:
        return Trace("extra_side_effect", len(reference) if len(taken) > len(reference) else None,
                     f"the state changed beyond the task: {'; '.join(violations[:3])}",
                     {"violations": violations}, False)
    if len(taken) > len(reference):
        return Trace("extra_side_effect", len(reference), f"{len(taken) - len(reference)} "
                     "actions after the task was done changed the outcome",
                     {"extra": taken[len(reference):][:5]}, False)
    if len(taken) >= task.max_steps or episode.outcome == "max_steps":
        return Trace("step_budget", len(taken) - 1 if taken else None,
                     f"the step budget ({task.max_steps}) ran out", {}, False)
    return Trace("premature_finish", len(taken), f"the episode stopped after {len(taken)} of "
                 f"the {len(reference)} needed steps", {}, False)
