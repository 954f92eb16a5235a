"""Events and a deterministic harness-sensitive runner for the evolver's tests."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from schemas.actions import ToolCall
from schemas.episodes import EpisodeEnded, Step
from schemas.observations import Observation, ToolResult
from schemas.tasks import TaskProposed
from schemas.verdicts import FailureTraced, VerdictIssued
from services.dataflow.evolution.delta import normalise
from services.dataflow.evolution.paired import EpisodeScore

#: A small harness spec as an author writes it (no defaults filled in, no version).
BASE_SPEC: dict[str, Any] = {
    "tools": {"hidden": [], "descriptions": {}},
    "skills": [], "subagents": [],
    "memory": {"retrieval": "lexical", "top_k": 5, "context_entries": 0},
    "playbook": ["Read before you write."],
    "context": {"budget_tokens": 2048, "recent_steps": 4, "screen_elements": 30},
}
# Validated as the harness validates it (defaults filled in), so SPEC["version"] is the version a
# Harness on this spec reports, whatever defaults HarnessSpec gains later.
SPEC = normalise(BASE_SPEC)
TEMPLATES = {"text_relative": "tool", "set_alarm": "tool", "recall_address": "memory",
             "bedtime": "skills", "delegate_trip": "subagent"}


def task(template: str, i: int, goal: str = "") -> TaskProposed:
    return TaskProposed(source="generator/1", correlation_id="run", task_id=f"{template}#{i}",
                        template=template, family=TEMPLATES[template], split="train", index=i,
                        goal=goal or f"goal {template} {i}")


def solved(template: str, i: int, person: str, contact_id: str, body: str
           ) -> tuple[EpisodeEnded, VerdictIssued]:
    def obs(step: int, name: str, value: Any) -> Observation:
        return Observation(step=step, clock_ms=0,
                           result=ToolResult(name=name, ok=True, value=value))

    episode = EpisodeEnded(
        source="rollout/1", correlation_id="run", episode_id=f"ep-{template}-{i}",
        task_id=f"{template}#{i}", device_id="sim-0", environment="sim", policy="oracle",
        outcome="finished", steps=[
            Step(index=0, action=ToolCall(name="contacts.search", arguments={"query": person}),
                 observation=obs(1, "contacts.search", [{"id": contact_id, "name": person}])),
            Step(index=1, action=ToolCall(name="messages.send",
                                          arguments={"contact_id": contact_id, "body": body}),
                 observation=obs(2, "messages.send", {"message_id": f"m{i}"}))])
    verdict = VerdictIssued(source="verifier/1", correlation_id="run",
                            episode_id=episode.episode_id, task_id=episode.task_id,
                            checker="final_state", score=1.0, passed=True)
    return episode, verdict


def failure(category: str, template: str, i: int) -> FailureTraced:
    return FailureTraced(event_id=f"fail-{category}-{template}-{i}", source="verifier/1",
                         correlation_id="run", episode_id=f"bad-{template}-{i}",
                         task_id=f"{template}#{i}", family=TEMPLATES[template],
                         category=category, summary=f"{category} in {template}")


Effect = Callable[[Mapping[str, Any], str, str, int], float | None]


def runner(effect: Effect, n: int = 6) -> Callable[[Mapping[str, Any], str], list[EpisodeScore]]:
    """Scores of a fixed scripted agent in harness `spec`: every template succeeds on
    instances with i % 3 == 0, unless `effect(spec, split, template, i)` says otherwise."""
    def run(spec: Mapping[str, Any], split: str) -> list[EpisodeScore]:
        out = []
        for template, family in TEMPLATES.items():
            for i in range(n):
                score = effect(spec, split, template, i)
                if score is None:
                    score = 1.0 if i % 3 == 0 else 0.0
                out.append(EpisodeScore(f"{split}:{template}#{i}", template, family, score))
        return out
    return run


def has_skill(spec: Mapping[str, Any], name: str) -> bool:
    return any(s.get("name") == name for s in spec.get("skills", []))
