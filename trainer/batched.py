"""Many episodes at once: each step, the prompts of every live episode are decoded in one batch.

A model policy answers one prompt per step; run one episode at a time, a GPU idles between
small `generate` calls and the suite's hundreds of episodes take minutes. `run_batched` keeps up
to `batch_size` episodes live, each on its own harnessed SimPhone and its own fork of the policy
(`ModelPolicy.fork`: same model and stats, its own goal and history), gathers their next prompts,
decodes them together (`ModelPolicy.generate_batch`, left-padded) and steps each harness with its
answer. A finished episode's slot takes the next task. Episodes follow `devices.suite.episode.
run_episode` exactly (reset, begin, act until `max_steps` or done, score the final state), so the
scores match the one-at-a-time path up to the numerics of padding.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from devices.harness import Harness
from devices.protocol import DeviceError, TaskInstance
from devices.sim import SimPhone
from devices.suite.scoring import score_final_state
from trainer.outcome import main_tool_calls

__all__ = ["BatchedEpisode", "run_batched"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class BatchedEpisode:
    """One episode's outcome and its own token and action counts."""

    task: TaskInstance
    score: float
    progress: float
    steps: int
    finished: bool
    output_tokens: int
    invalid: int
    tool_calls: int
    harness_version: str


@dataclass
class _Live:
    index: int
    task: TaskInstance
    harness: Harness
    agent: Any
    observation: Any
    steps: int = 0
    output_tokens: int = 0
    invalid: int = 0
    broken: bool = False

    @property
    def over(self) -> bool:
        return self.broken or self.steps >= self.task.max_steps or bool(self.observation.done)


def run_batched(policy: Any, tasks: Sequence[TaskInstance], *, spec: Any = None, batch_size: int = 64,
                on_episode: Callable[[BatchedEpisode], None] | None = None,
                before_step: Callable[[], None] | None = None) -> list[BatchedEpisode]:
    """Runs `policy` (a ModelPolicy) once on every task, up to `batch_size` episodes at a time;
    results come back in the order of `tasks`. `before_step` runs before every batched decode
    (a stop check raises from there)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    pending = deque(enumerate(tasks))
    idle: list[Harness] = []
    live: list[_Live] = []
    results: list[BatchedEpisode | None] = [None] * len(tasks)
    try:
        while pending or live:
            while pending and len(live) < batch_size:
                index, task = pending.popleft()
                harness = idle.pop() if idle else Harness(SimPhone(), spec)
                observation = harness.reset(task)
                agent = policy.fork()
                agent.begin(task.goal, harness.catalogue())
                live.append(_Live(index, task, harness, agent, observation))
            for episode in [e for e in live if e.over]:
                live.remove(episode)
                results[episode.index] = _finish(episode)
                idle.append(episode.harness)
                if on_episode is not None:
                    on_episode(results[episode.index])  # type: ignore[arg-type]
            if not live:
                continue
            if before_step is not None:
                before_step()
            prompts = [e.agent.prompt_ids(e.agent.prompt_messages(e.observation)) for e in live]
            before = len(policy.stats.output_tokens)
            schemas = [e.agent.answer_schema() for e in live] if policy.constrained else None
            texts = policy.generate_batch(prompts, schemas)
            counts = policy.stats.output_tokens[before:]
            for episode, text, count in zip(live, texts, counts, strict=True):
                invalid_before = policy.stats.invalid
                action = episode.agent.accept(text)
                episode.invalid += policy.stats.invalid - invalid_before
                episode.output_tokens += count
                try:
                    episode.observation = episode.harness.act(action)
                except DeviceError as exc:
                    logger.warning("episode %s ended early: %s", episode.task.task_id, exc)
                    episode.broken = True
                    continue
                episode.steps += 1
    finally:
        for harness in idle + [e.harness for e in live]:
            harness.close()
    return [r for r in results if r is not None]


def _finish(episode: _Live) -> BatchedEpisode:
    final = episode.harness.final_state()
    result = score_final_state(episode.task, final)
    return BatchedEpisode(task=episode.task, score=result.score, progress=result.progress, steps=episode.steps,
                          finished=bool(episode.observation.done), output_tokens=episode.output_tokens,
                          invalid=episode.invalid, tool_calls=main_tool_calls(episode.harness, episode.steps),
                          harness_version=episode.harness.version)
