"""The gate's runner on the task suite: a policy inside `Harness(SimPhone, spec)`, per split.

The instances are the suite's seeded ones (`generate_split(split, n, suite_seed)`), so two
harnesses compared by the gate see exactly the same tasks and worlds, and running the same
spec again gives the same scores (the rollback guarantee rests on this).
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from devices.harness.harness import Harness
from devices.harness.spec import HarnessSpec
from devices.suite.episode import run_episode
from devices.suite.instances import generate_split
from devices.suite.policies import OraclePolicy, Policy
from devices.suite.registry import templates_for
from schemas.envelope import Event
from schemas.episodes import EpisodeEnded, Step
from schemas.tasks import Split
from services.evolver.delta import normalise
from services.evolver.paired import EpisodeScore

__all__ = ["SOURCE", "suite_collector", "suite_runner"]

logger = logging.getLogger(__name__)

SOURCE = "evolver-rounds/1"


def suite_runner(make_policy: Callable[[], Policy], *, n_per_template: int = 2,
                 suite_seed: int = 0, templates: Sequence[str] | None = None,
                 ) -> Callable[[Mapping[str, Any], Split], list[EpisodeScore]]:
    """A gate runner: `(spec JSON, split) -> scores` of a fresh `make_policy()` on n seeded
    instances of every template serving the split (or only those named in `templates`)."""
    from devices.sim import SimPhone  # the sandbox is only needed when running

    def run(spec: Mapping[str, Any], split: Split) -> list[EpisodeScore]:
        model = HarnessSpec.from_json_dict(normalise(spec))
        chosen = templates_for(split)
        if templates is not None:
            chosen = [t for t in chosen if t.name in set(templates)]
        tasks = generate_split(split, n_per_template, suite_seed, chosen)
        policy = make_policy()
        harness = Harness(SimPhone(), model)
        try:
            out = []
            for task in tasks:
                result = run_episode(harness, task, policy)
                out.append(EpisodeScore(task.task_id, task.template, task.family, result.score))
        finally:
            harness.close()
        logger.info("harness %s on %s: %d episodes", model.version, split, len(out))
        return out

    return run


def suite_collector(make_policy: Callable[[], Policy] | None = None, *, split: Split = "train",
                    n_per_template: int = 2, suite_seed: int = 0,
                    templates: Sequence[str] | None = None, run_id: str = "rounds",
                    ) -> Callable[[Any, Mapping[str, Any], int], list[Event]]:
    """A rounds `collect`: the model's policy (`model.policy()`, or `make_policy()` when the
    model is None) in the harness on `split` instances, published as the
    loop would — `task.proposed`, `episode.ended`, and the verifier's own `verdict.issued` and
    `failure.traced` (services.verifier: checker on the stored final state, first wrong step
    against the oracle's trajectory)."""
    from devices.blobs import BlobStore
    from devices.sim import SimPhone
    from services.dataflow.tasks import task_event
    from services.verifier.decide import World, judge

    def collect(model: Any, spec: Mapping[str, Any], generation: int) -> list[Event]:
        harness_spec = HarnessSpec.from_json_dict(normalise(spec))
        chosen = templates_for(split)
        if templates is not None:
            chosen = [t for t in chosen if t.name in set(templates)]
        tasks = generate_split(split, n_per_template, suite_seed, chosen)
        if model is None and make_policy is None:
            raise ValueError("suite_collector needs a model with policy() or make_policy")
        policy = model.policy() if model is not None else make_policy()  # type: ignore[misc]
        harness = Harness(SimPhone(), harness_spec)
        reference = _ReferencePhone(Harness(SimPhone()))  # the oracle's reference run
        with tempfile.TemporaryDirectory(prefix="evolver-blobs-") as folder:
            world = World(blobs=BlobStore(Path(folder)), phone=reference, suite_seed=suite_seed)
            envelope = {"source": SOURCE, "correlation_id": f"{run_id}-g{generation}"}
            out: list[Event] = []
            try:
                for task in tasks:
                    proposed = task_event(task, tier="easy", **envelope)
                    episode = _episode(harness, task, policy, harness_spec.version,
                                       world.blobs, proposed, envelope)
                    out += [proposed, episode, *judge(proposed, episode, world)]
            finally:
                harness.close()
                reference.close()
        return out

    return collect


class _ReferencePhone:
    """A harnessed SimPhone for the verifier's oracle reference: the verifier reads `.state`
    with the checkers' API, which for a harnessed phone is its final-state view."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.device_id = harness.device_id

    @property
    def state(self) -> Any:
        return self.harness.view()

    def reset(self, task: Any) -> Any:
        return self.harness.reset(task)

    def act(self, action: Any) -> Any:
        return self.harness.act(action)

    def close(self) -> None:
        self.harness.close()


def _episode(harness: Harness, task: Any, policy: Policy, version: str, blobs: Any,
             proposed: Event, envelope: dict[str, str]) -> EpisodeEnded:
    """One in-process episode with every step recorded, its final state in the blob store."""
    observation = harness.reset(task)
    if isinstance(policy, OraclePolicy):
        policy.prepare(task)
    policy.begin(task.goal, harness.catalogue())
    steps: list[Step] = []
    while len(steps) < task.max_steps and not observation.done:
        action = policy.next_action(observation)
        observation = harness.act(action)
        steps.append(Step(index=len(steps), action=action, observation=observation))
    data = json.dumps(harness.final_state(), sort_keys=True, separators=(",", ":"),
                      default=str).encode()
    episode_id = f"{task.task_id}@{version}"
    return EpisodeEnded(episode_id=episode_id, task_id=task.task_id, device_id="sim-evolver",
                        environment="sim", policy=policy.name, harness=version,
                        outcome="finished" if observation.done else "max_steps", steps=steps,
                        final_state=blobs.put(data, "application/json"),
                        causation_id=proposed.event_id, **envelope)
