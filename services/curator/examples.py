"""Training examples from a trajectory: one per step, the context the policy saw as the
prompt and the action it took as the completion (canonical JSON)."""

from __future__ import annotations

import json
import logging
from typing import Any

from schemas.episodes import Step
from schemas.observations import Observation

__all__ = ["CONTEXT_VERSION", "action_json", "render_observation", "training_pairs"]

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
