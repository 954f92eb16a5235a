"""Real trajectories for tests, the bench and demos: suite tasks run on a SimPhone, turned
into the events the gate consumes (task, episode, verdict, failure, review request)."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Literal

from devices.blobs import BlobStore
from devices.sim.phone import SimPhone
from devices.suite.episode import score_state
from devices.suite.policies import make_policy
from devices.suite.registry import get_template
from schemas.episodes import EpisodeEnded, Step
from schemas.reviews import ReviewReason, ReviewRequested
from schemas.tasks import TaskProposed
from schemas.verdicts import FailureTraced, VerdictIssued
from services.gate.diff import diff_states, sim_state_view

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
               blobs: BlobStore | None = None, review_id: str | None = None) -> Sample:
    """Runs instance `index` of `template` (train split) with `policy` for up to `steps`
    steps on a fresh SimPhone; scores it from state. With `blobs`, step 1's screen gets a
    stored screenshot (an SVG standing in for a PNG) so the blob path is exercised."""
    spec = get_template(template)
    instance = spec.generate("train", index, suite_seed)
    if steps is not None:
        instance = instance.model_copy(update={"max_steps": steps})
    phone = SimPhone(f"sim-{index}")
    observation = phone.reset(instance)
    before = sim_state_view(phone.state.fingerprint())
    agent = make_policy(policy, seed=index)
    agent.begin(instance, phone)
    recorded: list[Step] = []
    while len(recorded) < instance.max_steps and not observation.done:
        action = agent.next_action(observation)
        observation = phone.act(action)
        if blobs is not None and len(recorded) == 0:
            ref = blobs.put(_screenshot(template).encode(), "image/svg+xml")
            observation = observation.model_copy(update={"screenshot": ref})
        recorded.append(Step(index=len(recorded), action=action, observation=observation,
                             latency_ms=1.0))
    score = score_state(instance, phone.state)
    diff = diff_states(before, sim_state_view(phone.state.fingerprint()))
    episode_id = f"ep-{uuid.uuid4().hex[:12]}"
    envelope = {"source": SOURCE, "correlation_id": run_id}
    task = TaskProposed(task_id=instance.task_id, template=template, family=spec.family,
                        split="train", index=instance.index, params=instance.params,
                        goal=instance.goal, **envelope)
    episode = EpisodeEnded.model_validate({
        "episode_id": episode_id, "task_id": instance.task_id, "device_id": phone.device_id,
        "environment": "sim", "policy": policy,
        "outcome": "finished" if observation.done else "max_steps",
        "steps": [s.model_dump() for s in recorded], "final_answer": phone.state.answer,
        "tool_calls": sum(s.action.action_type == "tool_call" for s in recorded), **envelope})
    verdict = VerdictIssued(episode_id=episode_id, task_id=instance.task_id,
                            checker=spec.checker, score=score, passed=score == 1.0,
                            details={"state_diff": diff}, **envelope)
    failure = None
    if score < 1.0:
        failure = FailureTraced(episode_id=episode_id, task_id=instance.task_id,
                                family=spec.family, category="incomplete",
                                step_index=max(len(recorded) - 1, 0),
                                summary=f"{policy} policy scored {score:.2f}",
                                evidence={"score": score}, **envelope)
    request = ReviewRequested(
        review_id=review_id or f"rv-{uuid.uuid4().hex[:12]}", subject="episode",
        subject_ids=[episode_id], summary=f"{template} #{index} by {policy}", score=score,
        task_id=instance.task_id, family=spec.family, template=template, tier=tier,
        reasons=list(reasons), submitted_by=submitted_by, double_review=double_review,
        **envelope)
    return Sample(task, episode, verdict, failure, request)


def _screenshot(label: str) -> str:
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="108" height="240">'
            '<rect width="108" height="240" fill="#223"/>'
            f'<text x="6" y="20" fill="#fff" font-size="10">{label[:16]}</text></svg>')
