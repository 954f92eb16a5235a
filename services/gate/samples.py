"""Real trajectories for tests, the bench and demos: suite tasks run on a harnessed SimPhone
the way the rollout runs them (`devices.harness.Harness` + `devices.suite.episode.run_episode`:
the policy sees the goal, the catalogue and observations; only the oracle is prepared with the
task), turned into the events the gate consumes (task, episode, verdict, failure, review
request). With a blob store the episode carries its final state, as the rollout's do."""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass
from typing import Literal

from devices.blobs import BlobStore
from devices.harness.harness import Harness
from devices.harness.spec import HarnessSpec
from devices.sim.phone import SimPhone
from devices.suite.episode import run_episode
from devices.suite.policies import make_policy
from devices.suite.registry import get_template
from schemas.episodes import EpisodeEnded, Step
from schemas.reviews import ReviewReason, ReviewRequested
from schemas.tasks import TaskProposed
from schemas.verdicts import FailureTraced, VerdictIssued
from services.gate.diff import episode_diff

__all__ = ["SOURCE", "Sample", "run_sample"]

logger = logging.getLogger(__name__)

SOURCE = "gate-samples/1"


@dataclass(frozen=True)
class Sample:
    task: TaskProposed
    episode: EpisodeEnded
    verdict: VerdictIssued
    failure: FailureTraced | None
    request: ReviewRequested

    @property
    def events(self) -> list:
        """In the order the loop would publish them."""
        out = [self.task, self.episode, self.verdict]
        if self.failure is not None:
            out.append(self.failure)
        return [*out, self.request]


def run_sample(template: str, index: int = 0, *, policy: Literal["oracle", "random"] = "oracle",
               steps: int | None = None, suite_seed: int = 0, run_id: str = "gate-samples",
               tier: str = "easy", reasons: tuple[ReviewReason, ...] = ("audit",),
               submitted_by: str | None = None, double_review: bool = False,
               blobs: BlobStore | None = None, review_id: str | None = None,
               spec: HarnessSpec | None = None) -> Sample:
    """Runs instance `index` of `template` (train split) with `policy` for up to `steps`
    steps on a fresh SimPhone in a Harness of `spec` (the default one if None), and scores
    the harness's final state with the template's checker. With `blobs`, the final state is
    stored and named by the episode (as the rollout does), and step 1's screen gets a stored
    screenshot (an SVG standing in for a PNG) so the blob path is exercised."""
    template_spec = get_template(template)
    instance = template_spec.generate("train", index, suite_seed)
    if steps is not None:
        instance = instance.model_copy(update={"max_steps": steps})
    harness = Harness(SimPhone(f"sim-{index}"), spec)
    result = run_episode(harness, instance, make_policy(policy, seed=index))
    final = harness.final_state()
    recorded: list[Step] = []
    for step in harness.history:
        observation = step.observation
        if blobs is not None and not recorded:
            ref = blobs.put(_screenshot(template).encode(), "image/svg+xml")
            observation = observation.model_copy(update={"screenshot": ref})
        recorded.append(Step(index=len(recorded), action=step.action, observation=observation,
                             latency_ms=1.0, tool_calls=_tool_calls(step.action)))
    final_ref = None
    if blobs is not None:
        final_ref = blobs.put(json.dumps(final, sort_keys=True, separators=(",", ":"),
                                         default=str).encode(), "application/json")
    score = result.score
    # The rollout's rule: a run the harness stopped at max_steps did not finish on its own.
    finished = result.finished and (len(recorded) < instance.max_steps
                                    or recorded[-1].action.action_type == "finish")
    diff = episode_diff(instance.model_dump(mode="json"), final)
    episode_id = f"ep-{uuid.uuid4().hex[:12]}"
    envelope = {"source": SOURCE, "correlation_id": run_id}
    task = TaskProposed(task_id=instance.task_id, template=template, family=template_spec.family,
                        split="train", index=instance.index, params=instance.params,
                        goal=instance.goal, **envelope)
    episode = EpisodeEnded.model_validate({
        "episode_id": episode_id, "task_id": instance.task_id, "device_id": harness.device_id,
        "environment": "sim", "policy": policy, "harness": harness.version,
        "outcome": "finished" if finished else "max_steps",
        "steps": [s.model_dump() for s in recorded], "final_answer": final.get("answer"),
        "tool_calls": sum(s.tool_calls for s in recorded),
        "final_state": final_ref.model_dump() if final_ref is not None else None, **envelope})
    verdict = VerdictIssued(episode_id=episode_id, task_id=instance.task_id,
                            checker=template_spec.checker, score=score, passed=score == 1.0,
                            details={"state_diff": diff}, **envelope)
    failure = None
    if score < 1.0:
        failure = FailureTraced(episode_id=episode_id, task_id=instance.task_id,
                                family=template_spec.family, category="incomplete",
                                step_index=max(len(recorded) - 1, 0),
                                summary=f"{policy} policy scored {score:.2f}",
                                evidence={"score": score}, **envelope)
    request = ReviewRequested(
        review_id=review_id or f"rv-{uuid.uuid4().hex[:12]}", subject="episode",
        subject_ids=[episode_id], summary=f"{template} #{index} by {policy}", score=score,
        task_id=instance.task_id, family=template_spec.family, template=template, tier=tier,
        reasons=list(reasons), submitted_by=submitted_by, double_review=double_review,
        **envelope)
    return Sample(task, episode, verdict, failure, request)


def _tool_calls(action: object) -> int:
    """Tool calls one action made, counted as the rollout counts them."""
    kind = getattr(action, "action_type", "")
    if kind == "tool_call":
        return 1
    if kind == "delegate":
        return len((getattr(action, "arguments", None) or {}).get("tool_calls", []) or [])
    return 1 if kind in ("use_skill", "memory_read", "memory_write") else 0


def _screenshot(label: str) -> str:
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="108" height="240">'
            '<rect width="108" height="240" fill="#223"/>'
            f'<text x="6" y="20" fill="#fff" font-size="10">{label[:16]}</text></svg>')
