"""Runs one episode of a proposed task: policy and device calls under timeouts, per-step
tokens/latency/tool calls, the final state in the blob store, and the two episode events.

A stuck policy or device call does not hang the rollout: after `call_timeout_s` the episode
ends with outcome `timeout` and a failure message (the abandoned call's thread is left to
finish on its own; its worker is replaced).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, TypeVar

from devices.blobs import BlobStore
from devices.harness.context import CONTEXT_VERSION
from devices.harness.episode import play
from devices.protocol import DeviceError, DeviceLost, declares_bounded_calls
from schemas.episodes import EpisodeEnded, EpisodeStarted, Step, TokenUsage, unseen_screens_dropped
from schemas.tasks import TaskProposed
from services.dataflow.ids import derived_id
from services.dataflow.tasks import instance_of
from services.rollout.policies import SlippingOracle

__all__ = ["EpisodeTimeout", "Rollout", "episode_id_for"]

logger = logging.getLogger(__name__)

SOURCE = "rollout/1.0.0"
T = TypeVar("T")


class EpisodeTimeout(RuntimeError):
    """A policy or device call took longer than the rollout's call timeout."""


def episode_id_for(task_id: str, policy: str, harness: str) -> str:
    """Deterministic: the same task rolled out again by the same policy and harness (a
    redelivery after a crash) is the same episode, so nothing downstream counts it twice."""
    return derived_id("episode", task_id, policy, harness)


@dataclass
class _Guard:
    """One worker thread that runs calls with a timeout; replaced when a call gets stuck."""

    timeout_s: float
    pool: ThreadPoolExecutor | None = None

    def call(self, fn: Callable[..., T], *args: Any, bounded: bool = False) -> T:
        """`fn(*args)` on the worker, given up after `timeout_s`; a `bounded` call (in-process
        work that cannot block: a SimPhone, a built-in policy) runs here, without the two
        thread hand-offs per call (a fifth of an oracle episode's CPU on a SimPhone)."""
        if self.timeout_s <= 0 or bounded:
            return fn(*args)
        if self.pool is None:
            self.pool = ThreadPoolExecutor(1, thread_name_prefix="rollout-call")
        future = self.pool.submit(fn, *args)
        try:
            return future.result(self.timeout_s)
        except FutureTimeout:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = None
            raise EpisodeTimeout(f"{getattr(fn, '__qualname__', fn)} took longer than "
                                 f"{self.timeout_s:g} s") from None

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)


class Rollout:
    """Runs episodes on one harnessed device with one policy object (not thread-safe: one per
    worker). `device` is a devices.harness.Harness (or a bare device, which gets wrapped in
    one with the default spec); the policy sees the goal, the catalogue and observations."""

    def __init__(self, device: Any, policy: Any, policy_name: str, blobs: BlobStore, *,
                 environment: str = "sim", call_timeout_s: float = 30.0,
                 suite_seed: int = 0) -> None:
        from devices.harness.harness import Harness

        self.device = device if isinstance(device, Harness) else Harness(device)
        self.policy = policy
        self.policy_name = policy_name
        self.blobs = blobs
        self.harness = self.device.version
        self.environment = environment
        self.suite_seed = suite_seed
        self._guard = _Guard(call_timeout_s)
        # Calls that cannot hang need no timeout (`bounded_calls`: the SimPhone, built-in policies).
        self._device_bounded = declares_bounded_calls(self.device)
        self._policy_bounded = declares_bounded_calls(policy)
        #: Seconds spent inside device calls (reset/act): the sim's busy time.
        self.device_s = 0.0

    def _device(self, fn: Any, *args: Any) -> Any:
        began = time.perf_counter()
        try:
            return self._guard.call(fn, *args, bounded=self._device_bounded)
        finally:
            self.device_s += time.perf_counter() - began

    def run(self, proposed: TaskProposed) -> tuple[EpisodeStarted, EpisodeEnded]:
        task = instance_of(proposed, self.suite_seed)
        episode_id = episode_id_for(task.task_id, self.policy_name, self.harness)
        envelope = {"source": SOURCE, "correlation_id": proposed.correlation_id}
        started = EpisodeStarted(
            event_id=derived_id("episode.started", episode_id), episode_id=episode_id,
            task_id=task.task_id, device_id=self.device.device_id,
            environment=self.environment, policy=self.policy_name, harness=self.harness,
            causation_id=proposed.event_id, **envelope)
        steps: list[Step] = []
        outcome, failure, answer = "max_steps", None, None
        total = TokenUsage()
        reached = False  # the device answered (a first view exists, so a context does)
        began, counted = time.perf_counter(), 0  # the current step's start and token count before it
        bind = getattr(self.device.device, "bind", None)
        if bind is not None:  # a RemoteDevice sends its requests under this episode's id
            bind(episode_id, proposed.correlation_id)

        def call_device(fn: Callable[..., T], *args: Any) -> T:
            nonlocal reached
            answered = self._device(fn, *args)
            reached = True
            return answered

        def call_policy(fn: Callable[..., T], *args: Any) -> T:
            nonlocal began, counted
            began, counted = time.perf_counter(), _counted(self.policy)
            return self._guard.call(fn, *args, bounded=self._policy_bounded)

        def record(index: int, action: Any, observation: Any) -> None:
            nonlocal total, answer
            usage = _usage(self.policy, counted)
            steps.append(Step(index=index, action=action, observation=observation,
                              thought=getattr(self.policy, "last_thought", None), tokens=usage,
                              latency_ms=(time.perf_counter() - began) * 1000.0,
                              tool_calls=_tool_calls(action), target=_is_target(self.policy)))
            total = TokenUsage(prompt=total.prompt + usage.prompt,
                               completion=total.completion + usage.completion,
                               reasoning=total.reasoning + usage.reasoning)
            if action.action_type in ("answer", "finish"):
                answer = getattr(action, "text", None) or getattr(action, "answer", None)

        try:
            # play prepares a privileged oracle with the task (CONTRACT-6 §1), no other policy
            observation = play(self.device, task, self.policy, after_step=record,
                               call_policy=call_policy, call_device=call_device).checked().observation
            if observation.done and (len(steps) < task.max_steps
                                     or steps[-1].action.action_type == "finish"):
                outcome = "finished"
        except Exception as error:  # noqa: BLE001 - a policy bug ends its episode, not the service
            outcome, failure = _ending(error, episode_id)
        context = _context_header(self.policy, self.device) if reached else None
        final_state = None
        if outcome != "timeout":
            try:
                state = self.device.final_state(copy=False)  # serialised below, before anything acts
            except DeviceError as error:  # a lost remote device has no state to report
                failure = failure or f"the device could not report its final state: {error}"
                outcome = "device_failed"
            else:
                data = json.dumps(state, sort_keys=True, separators=(",", ":"),
                                  default=str).encode()
                final_state = self.blobs.put(data, "application/json")
        steps = unseen_screens_dropped(steps)  # what the policy was shown, not every screen
        ended = EpisodeEnded(
            event_id=derived_id("episode.ended", episode_id), episode_id=episode_id,
            task_id=task.task_id, device_id=self.device.device_id,
            environment=self.environment, policy=self.policy_name, harness=self.harness,
            outcome=outcome, steps=steps, final_answer=answer, total_tokens=total,
            tool_calls=sum(s.tool_calls for s in steps), final_state=final_state,
            failure=failure, context=context, context_version=CONTEXT_VERSION if context else None,
            causation_id=started.event_id, **envelope)
        return started, ended

    def close(self) -> None:
        self._guard.close()


def _ending(error: Exception, episode_id: str) -> tuple[str, str]:
    """The outcome and failure sentence of an episode that `error` ended."""
    if isinstance(error, EpisodeTimeout):
        return "timeout", str(error)
    if isinstance(error, DeviceLost):
        return "device_failed", f"the device was lost: {error}"
    if isinstance(error, DeviceError):
        return "device_failed", f"the device failed: {error}"
    logger.warning("episode %s ended with an error: %s", episode_id, error)
    return "error", f"{type(error).__name__}: {error}"


def _is_target(policy: Any) -> bool:
    """Whether the step just played may be taught: False only for the slipping oracle's own slip
    (any other policy's steps are all targets, so none can hide its steps from training)."""
    return not (isinstance(policy, SlippingOracle) and policy.last_target is False)


def _context_header(policy: Any, harness: Any) -> str | None:
    """What the policy was shown before its first step: its own rendering when it keeps one (a
    ModelPolicy), else the harness's; both are devices.harness.context's header."""
    shown = getattr(policy, "context_header", None)
    if isinstance(shown, str):
        return shown
    try:
        return harness.context_header()
    except Exception as error:  # noqa: BLE001 - a missing record must not lose the episode
        logger.warning("could not record the context header: %s", error)
        return None


def _counted(policy: Any) -> int:
    stats = getattr(policy, "stats", None)
    return len(getattr(stats, "prompt_tokens", None) or ())


def _usage(policy: Any, counted_before: int) -> TokenUsage:
    """The tokens of the policy's last call: its `last_usage` (a TokenUsage), or the newest
    entries of `stats.prompt_tokens` / `stats.output_tokens` (trainer.policy.ModelPolicy)."""
    usage = getattr(policy, "last_usage", None)
    if isinstance(usage, TokenUsage):
        return usage
    stats = getattr(policy, "stats", None)
    prompts = list(getattr(stats, "prompt_tokens", None) or ())
    outputs = list(getattr(stats, "output_tokens", None) or ())
    if len(prompts) > counted_before:
        return TokenUsage(prompt=int(prompts[-1]), completion=int(outputs[-1]) if outputs else 0,
                          reasoning=int(getattr(policy, "last_reasoning_tokens", 0) or 0))
    return TokenUsage()


def _tool_calls(action: Any) -> int:
    kind = action.action_type
    if kind == "tool_call":
        return 1
    if kind == "delegate":
        return len((action.arguments or {}).get("tool_calls", []) or [])
    return 1 if kind in ("use_skill", "memory_read", "memory_write") else 0
