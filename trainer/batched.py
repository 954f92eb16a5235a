"""Many episodes at once: each step, the prompts of every live episode are decoded in one batch.

A model policy answers one prompt per step; run one episode at a time, a GPU idles between
small `generate` calls and the suite's hundreds of episodes take minutes. `run_batched` keeps up
to `batch_size` episodes live, each on its own harnessed SimPhone and its own fork of the policy
(`ModelPolicy.fork`: same model and stats, its own goal and history), gathers their next prompts,
decodes them together (`ModelPolicy.generate_batch`, left-padded) and steps each harness with its
answer. A finished episode's slot takes the next task. Each slot is the one loop's `Episode`
(`devices.harness.episode`: reset, begin, step until `max_steps`, done or a device error), only
its actions come from the batched decode; the final state is scored as `devices.suite.episode.
run_episode` does, so the scores match the one-at-a-time path up to the numerics of padding.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from devices.harness import Harness
from devices.harness.episode import Episode
from devices.protocol import TaskInstance
from devices.sim import SimPhone
from devices.suite.scoring import score_final_state
from trainer.outcome import main_tool_calls

__all__ = ["BatchedEpisode", "run_batched"]


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
    """A slot's episode (the one loop's `Episode`, stepped from here) and its own counts."""

    index: int
    episode: Episode
    output_tokens: int = 0
    invalid: int = 0


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
                live.append(_Live(index, Episode(harness, task, policy.fork())))
            for slot in [e for e in live if e.episode.over]:
                live.remove(slot)
                results[slot.index] = _finish(slot)
                idle.append(slot.episode.harness)
                if on_episode is not None:
                    on_episode(results[slot.index])  # type: ignore[arg-type]
            if not live:
                continue
            if before_step is not None:
                before_step()
            agents = [e.episode.policy for e in live]
            prompts = [a.prompt_ids(a.prompt_messages(e.episode.observation))
                       for a, e in zip(agents, live, strict=True)]
            before = len(policy.stats.output_tokens)
            schemas = [a.answer_schema() for a in agents] if policy.constrained else None
            texts = policy.generate_batch(prompts, schemas)
            counts = policy.stats.output_tokens[before:]
            for slot, agent, text, count in zip(live, agents, texts, counts, strict=True):
                invalid_before = policy.stats.invalid
                action = agent.accept(text)
                slot.invalid += policy.stats.invalid - invalid_before
                slot.output_tokens += count
                slot.episode.step(action)
    finally:
        for harness in idle + [e.episode.harness for e in live]:
            harness.close()
    return [r for r in results if r is not None]


def _finish(slot: _Live) -> BatchedEpisode:
    episode = slot.episode
    result = score_final_state(episode.task, episode.harness.final_state())
    steps = len(episode.actions)
    return BatchedEpisode(task=episode.task, score=result.score, progress=result.progress, steps=steps,
                          finished=bool(episode.observation.done), output_tokens=slot.output_tokens,
                          invalid=slot.invalid, tool_calls=main_tool_calls(episode.harness, steps),
                          harness_version=episode.harness.version)
