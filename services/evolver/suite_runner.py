"""The gate's runner on the task suite: a policy inside `Harness(SimPhone, spec)`, per split.

The instances are the suite's seeded ones (`generate_split(split, n, suite_seed)`), so two
harnesses compared by the gate see exactly the same tasks and worlds, and running the same
spec again gives the same scores (the rollback guarantee rests on this).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from devices.harness.episode import play
from devices.harness.harness import Harness
from devices.harness.spec import HarnessSpec
from devices.sim import SimPhone
from devices.suite.instances import generate_split
from devices.suite.policies import OraclePolicy, Policy
from devices.suite.registry import templates_for
from devices.suite.scoring import score_final_state
from schemas.envelope import Event
from schemas.episodes import EpisodeEnded, Step
from schemas.tasks import Split, TaskProposed
from schemas.verdicts import FailureTraced, VerdictIssued
from services.dataflow.evolution.delta import normalise
from services.dataflow.evolution.paired import EpisodeScore
from services.dataflow.evolution.propose import refused_tools
from services.dataflow.ids import derived_id

__all__ = ["SOURCE", "oracle_calls", "play_episode", "suite_collector", "suite_runner"]

logger = logging.getLogger(__name__)

SOURCE = "evolver-rounds/1"


def _tasks(split: Split, n_per_template: int, suite_seed: int,
           templates: Sequence[str] | None, max_steps: int | None) -> list[Any]:
    """n seeded instances of every template serving `split` (or only those in `templates`),
    each with at most `max_steps` steps when given."""
    chosen = templates_for(split)
    if templates is not None:
        chosen = [t for t in chosen if t.name in set(templates)]
    tasks = generate_split(split, n_per_template, suite_seed, chosen)
    if max_steps is not None:
        tasks = [t.model_copy(update={"max_steps": min(t.max_steps, max_steps)}) for t in tasks]
    return tasks


def suite_runner(make_policy: Callable[[], Policy], *, n_per_template: int = 2,
                 suite_seed: int = 0, templates: Sequence[str] | None = None,
                 max_steps: int | None = None, batch_size: int = 64,
                 ) -> Callable[[Mapping[str, Any], Split], list[EpisodeScore]]:
    """A gate runner: `(spec JSON, split) -> scores` of a fresh `make_policy()` on n seeded
    instances of every template serving the split (or only those named in `templates`), each
    capped at `max_steps` steps when given (a slow model's budget). A model policy (one with
    `generate_batch`) plays up to `batch_size` episodes at once (trainer.batched)."""
    def run(spec: Mapping[str, Any], split: Split) -> list[EpisodeScore]:
        model = HarnessSpec.from_json_dict(normalise(spec))
        tasks = _tasks(split, n_per_template, suite_seed, templates, max_steps)
        policy = make_policy()
        if hasattr(policy, "generate_batch"):  # a model policy: decode many episodes at once
            from trainer.batched import run_batched

            out = [EpisodeScore(e.task.task_id, e.task.template, e.task.family, e.score)
                   for e in run_batched(policy, tasks, spec=model, batch_size=batch_size)]
            logger.info("harness %s on %s: %d episodes (batched)", model.version, split, len(out))
            return out
        harness = Harness(SimPhone(), model)
        try:
            out = []
            for task in tasks:
                play_episode(harness, task, policy)
                score = score_final_state(task, harness.final_state()).score
                out.append(EpisodeScore(task.task_id, task.template, task.family, score))
        finally:
            harness.close()
        logger.info("harness %s on %s: %d episodes", model.version, split, len(out))
        return out

    return run


def suite_collector(make_policy: Callable[[], Policy] | None = None, *, split: Split = "train",
                    n_per_template: int = 2, suite_seed: int = 0,
                    templates: Sequence[str] | None = None, run_id: str = "rounds",
                    max_steps: int | None = None,
                    demonstrations: Callable[[], Policy] | None = None,
                    ) -> Callable[[Any, Mapping[str, Any], int], list[Event]]:
    """A rounds `collect`: the model's policy (`model.policy()`, or `make_policy()` when the
    model is None) in the harness on `split` instances (at most `max_steps` steps each when
    given), published as the loop would — `task.proposed`, `episode.ended`, `verdict.issued`
    (the suite's checker on the harness's final state, never the agent's claim) and, for
    failures, `failure.traced`.

    `demonstrations` (e.g. the oracle, as the data phase rolls out) also plays the same
    tasks, uncapped; its solved episodes and their verdicts are added (never failures), so the
    evolver has successful trajectories of the templates the model fails to distil skills
    and playbook lines from. Their episode ids differ from the model's.

    This is the in-process stand-in for rollout + verifier that `flywheel harness rounds` and
    `flywheel run` use; in the full loop the verifier service traces failures against the
    oracle."""

    def collect(model: Any, spec: Mapping[str, Any], generation: int) -> list[Event]:
        harness_spec = HarnessSpec.from_json_dict(normalise(spec))
        full = _tasks(split, n_per_template, suite_seed, templates, None)
        tasks = _tasks(split, n_per_template, suite_seed, templates, max_steps)
        if model is None and make_policy is None:
            raise ValueError("suite_collector needs a model with policy() or make_policy")
        policy = model.policy() if model is not None else make_policy()  # type: ignore[misc]
        harness = Harness(SimPhone(), harness_spec)
        correlation = f"{run_id}-g{generation}"
        out: list[Event] = []
        try:
            for task in tasks:
                proposed = _proposed(task, correlation)
                episode, final = _episode(harness, task, policy, harness_spec.version,
                                          proposed)
                out += [proposed, episode, *_judge(task, episode, final)]
            if demonstrations is not None:
                out += _demonstrations(harness, full, demonstrations(), harness_spec.version,
                                       correlation)
        finally:
            harness.close()
        return out

    return collect


def _proposed(task: Any, correlation: str) -> TaskProposed:
    """The task.proposed event of a round's task (its id derived, so a rerun names it the same)."""
    return TaskProposed(event_id=derived_id("task.proposed", correlation, task.task_id), source=SOURCE,
                        correlation_id=correlation, task_id=task.task_id, template=task.template,
                        family=task.family, split=task.split, index=task.index, params=task.params,
                        goal=task.goal)


def _demonstrations(harness: Harness, tasks: Sequence[Any], policy: Policy, version: str,
                    correlation: str) -> list[Event]:
    """The solved episodes of `policy` on `tasks`, with their passing verdicts."""
    out: list[Event] = []
    for task in tasks:
        episode, final = _episode(harness, task, policy, version, _proposed(task, correlation), tag="demo")
        verdict, *_ = _judge(task, episode, final)
        if verdict.passed:  # type: ignore[attr-defined]
            out += [episode, verdict]
    return out


def play_episode(harness: Harness, task: Any, policy: Policy) -> tuple[list[Step], str, str | None]:
    """One episode in the harness: its steps, its outcome, and why it ended early if it did.
    A policy that raises ends its own episode ('error'); the state it left is still scored."""
    steps: list[Step] = []

    def record(index: int, action: Any, observation: Any) -> None:
        steps.append(Step(index=index, action=action, observation=observation))

    try:
        played = play(harness, task, policy, after_step=record)
    except Exception as error:  # noqa: BLE001 - a policy bug fails its episode, not the gate
        logger.info("episode of %s ended by the policy: %s", task.task_id, error)
        return steps, "error", f"{type(error).__name__}: {error}"
    if played.error is not None:
        return steps, "error", f"{type(played.error).__name__}: {played.error}"
    return steps, "finished" if played.finished else "max_steps", None


def oracle_calls(task: Any) -> list[tuple[str, dict[str, Any]]]:
    """The oracle's tool calls on `task` (what a planner would pass the skill)."""
    calls: list[tuple[str, dict[str, Any]]] = []

    def collect(_index: int, _observation: Any, action: Any) -> None:
        if action.action_type == "tool_call":
            calls.append((action.name, dict(action.arguments)))

    play(Harness(SimPhone()), task, OraclePolicy(), on_step=collect)
    return calls


def _episode(harness: Harness, task: Any, policy: Policy, version: str, proposed: Event,
             tag: str = "") -> tuple[EpisodeEnded, dict[str, Any]]:
    """One in-process episode with every step recorded, and the harness's final state."""
    steps, outcome, failure = play_episode(harness, task, policy)
    episode_id = derived_id("episode", proposed.correlation_id, task.task_id, version,
                            *([tag] if tag else []))
    episode = EpisodeEnded(
        event_id=derived_id("episode.ended", episode_id), episode_id=episode_id,
        task_id=task.task_id, device_id="sim-evolver", environment="sim", policy=policy.name,
        harness=version, outcome=outcome, steps=steps, failure=failure, source=SOURCE,
        correlation_id=proposed.correlation_id, causation_id=proposed.event_id)
    return episode, harness.final_state()


def _judge(task: Any, episode: EpisodeEnded, final: dict[str, Any]) -> list[Event]:
    """The verdict from the suite's checker, and a failure trace for a failed episode: its
    category from what the episode shows (a tool the catalogue refused, the step budget,
    writes beyond the task, else an incomplete task)."""
    result = score_final_state(task, final)
    envelope = {"source": SOURCE, "correlation_id": episode.correlation_id,
                "causation_id": episode.event_id}
    verdict = VerdictIssued(
        event_id=derived_id("verdict.issued", episode.episode_id), episode_id=episode.episode_id,
        task_id=task.task_id, checker="final_state", score=result.score, passed=result.passed,
        progress=result.progress, details={"template": task.template}, **envelope)
    if result.passed:
        return [verdict]
    refused = refused_tools(episode)
    if refused:
        category, summary = "wrong_tool", f"called {refused[0]}, which the catalogue does not show"
    elif episode.outcome == "error":
        category, summary = "incomplete", f"the policy stopped: {episode.failure}"
    elif episode.outcome == "max_steps":
        category, summary = "step_budget", f"the step budget ({task.max_steps}) ran out"
    elif result.violations:
        category, summary = "extra_side_effect", "; ".join(result.violations[:3])
    else:
        met = sum(1 for _, ok in result.subgoals if ok)
        category, summary = "incomplete", f"{met} of {len(result.subgoals)} sub-goals met"
    failure = FailureTraced(
        event_id=derived_id("failure.traced", episode.episode_id), episode_id=episode.episode_id,
        task_id=task.task_id, family=task.family, category=category, summary=summary,
        evidence={"template": task.template, "refused": list(refused),
                  "violations": result.violations[:5]},
        event_ids=[episode.event_id, verdict.event_id], **envelope)
    return [verdict, failure]
