"""Training examples from a trajectory: one per step, the context the policy saw as the
prompt and the action it took as the completion (canonical JSON).

`harness_pairs` replays the episode's actions through the harness it ran in (deterministic
on the sim) and takes `Harness.context()` before each action: exactly what a language-model
policy reads at run time. `training_pairs` is the plain rendering used when the episode ran
in a harness version this curator cannot rebuild.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from schemas.episodes import Step
from schemas.observations import Observation

__all__ = [
    "CONTEXT_VERSION",
    "action_json",
    "correction_pairs",
    "harness_pairs",
    "render_observation",
    "training_pairs",
]

logger = logging.getLogger(__name__)

#: Bumped when the rendering changes, so a snapshot says which context format it holds.
CONTEXT_VERSION = "context/1"
#: Tool results are cut to this many characters in the context (they can be long lists).
MAX_RESULT_CHARS = 600


def action_json(action: Any) -> str:
    """The action as compact JSON with sorted keys (the completion a model must produce)."""
    data = action.model_dump(mode="json", exclude_none=True) if hasattr(action, "model_dump") \
        else dict(action)
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def render_observation(observation: Observation) -> str:
    parts = []
    if observation.foreground_app:
        parts.append(f"app: {observation.foreground_app}")
    result = observation.result
    if result is not None:
        if result.ok:
            value = json.dumps(result.value, sort_keys=True, default=str)
            if len(value) > MAX_RESULT_CHARS:
                value = value[:MAX_RESULT_CHARS] + "…"
            parts.append(f"result of {result.name}: {value}")
        elif result.error is not None:
            parts.append(f"error from {result.name}: {result.error.code}: {result.error.message}")
    if observation.message:
        parts.append(f"message: {observation.message}")
    if observation.screen:
        labels = [e.text or e.content_description for e in observation.screen]
        parts.append("screen: " + " | ".join(str(x) for x in labels if x)[:MAX_RESULT_CHARS])
    return "; ".join(parts) or "(nothing new)"


def training_pairs(goal: str, steps: list[Step], first: Observation | None = None,
                   ) -> list[tuple[str, str]]:
    """(prompt, completion) for every step: the goal and the history so far, then the action."""
    header = (f"You are a planning agent operating an Android phone through tools and actions.\n"
              f"Goal: {goal}\n")
    history: list[str] = []
    if first is not None:
        history.append(f"Observation: {render_observation(first)}")
    pairs = []
    for step in steps:
        prompt = header + "\n".join(history) + ("\n" if history else "") + "Next action:"
        completion = action_json(step.action)
        pairs.append((prompt, completion))
        history.append(f"Action {step.index}: {completion}")
        history.append(f"Observation: {render_observation(step.observation)}")
    return pairs


def harness_pairs(task: Any, steps: list[Step], harness: Any) -> list[tuple[str, str]] | None:
    """(harness context, action JSON) per step, replayed on `harness` (reset to `task`);
    None when the replay diverges from the recorded observations (then the caller falls
    back to `training_pairs`)."""
    harness.reset(task)
    pairs = []
    for step in steps:
        pairs.append((harness.context(), action_json(step.action)))
        observation = harness.act(step.action)
        recorded = step.observation
        if (observation.result is None) != (recorded.result is None) or (
                observation.result is not None and recorded.result is not None
                and observation.result.ok != recorded.result.ok):
            logger.warning("replay of %s diverged at step %d; using the plain rendering",
                           getattr(task, "task_id", "?"), step.index)
            return None
    return pairs


def correction_pairs(task: Any, steps: list[Step], first_wrong: int, harness: Any,
                     ) -> tuple[int, list[tuple[str, str]]] | None:
    """The oracle's continuation from the failing state as (context, action) pairs, and the
    step it starts at: first after the wrong step (teaching recovery), else instead of it.
    None when the oracle cannot finish the task from either state."""
    from services.dataflow.tasks import ScriptedOracle, score_final_state

    for start in (first_wrong + 1, first_wrong):
        if start > len(steps) or (start > 0 and steps[start - 1].action.action_type == "finish"):
            continue
        observation = harness.reset(task)
        for step in steps[:start]:
            observation = harness.act(step.action)
        oracle = ScriptedOracle()
        oracle.prepare(task)
        oracle.begin(task.goal, harness.catalogue())
        pairs: list[tuple[str, str]] = []
        try:
            while start + len(pairs) < task.max_steps and not observation.done:
                context = harness.context()
                action = oracle.next_action(observation)
                pairs.append((context, action_json(action)))
                observation = harness.act(action)
        except (LookupError, ValueError, RuntimeError):
            continue  # the state misleads the oracle: no continuation from here
        if pairs and score_final_state(task, harness.final_state()) >= 1.0:
            return start, pairs
    return None
