"""The verifier's pure domain: checker on the stored final state, failure taxonomy."""

from __future__ import annotations

from pathlib import Path

import pytest

from devices.blobs import BlobStore
from devices.sim import SimPhone
from schemas.verdicts import FAILURE_CATEGORIES
from services.verifier.decide import VerifierState, World, decide, evolve
from tests.services.dataflow.helpers import proposed, roll


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(BlobStore(tmp_path), SimPhone("test-verifier"))


def known(*tasks):  # type: ignore[no-untyped-def]
    state = VerifierState()
    for task in tasks:
        state = evolve(state, task)
    return state


def test_oracle_episode_passes_and_has_no_failure(world: World, tmp_path: Path) -> None:
    task = proposed()
    _, ended = roll(task, tmp_path)
    out = decide(known(task), ended, world)
    assert [e.type for e in out] == ["verdict.issued"]
    assert out[0].passed and out[0].score == 1.0 and not out[0].environment_fault
    assert out[0].verifier and out[0].causation_id == ended.event_id


def test_the_claim_is_ignored_the_stored_state_decides(world: World, tmp_path: Path) -> None:
    task = proposed(template=5)
    _, claimed = roll(task, tmp_path, policy="devices.suite.policies:ClaimPolicy")
    verdict, failure = decide(known(task), claimed, world)
    assert not verdict.passed and verdict.score < 1.0
    assert failure.type == "failure.traced" and failure.category in FAILURE_CATEGORIES
    assert not failure.environment_fault
    assert failure.event_ids == [claimed.event_id, verdict.event_id]
    # The same claim with the solved state in the store passes: only the state counts.
    _, solved = roll(task, tmp_path)
    swapped = claimed.model_copy(update={"final_state": solved.final_state})
    assert decide(known(task), swapped, world)[0].passed


def test_an_episode_before_its_task_waits_for_it(world: World, tmp_path: Path) -> None:
    task = proposed(i=2)
    _, ended = roll(task, tmp_path)
    state = evolve(VerifierState(), ended)
    assert decide(VerifierState(), ended, world) == []
    out = decide(state, task, world)
    assert [e.episode_id for e in out] == [ended.episode_id]


def test_timeouts_are_environment_faults_kept_apart(world: World, tmp_path: Path) -> None:
    task = proposed()
    _, ended = roll(task, tmp_path)
    timed_out = ended.model_copy(update={"outcome": "timeout", "final_state": None,
                                         "failure": "device.act took longer than 30 s"})
    verdict, failure = decide(known(task), timed_out, world)
    assert verdict.environment_fault and not verdict.passed
    assert failure.category == "environment_fault" and failure.environment_fault


def test_wrong_arguments_are_traced_to_their_first_step(world: World, tmp_path: Path) -> None:
    from schemas.actions import ToolCall

    for template in range(20):
        task = proposed(template=template)
        _, ended = roll(task, tmp_path)
        first = next((s for s in ended.steps if isinstance(s.action, ToolCall)
                      and s.action.arguments), None)
        if first is None:
            continue
        key = min(first.action.arguments)
        bad = first.action.model_copy(update={"arguments": {**first.action.arguments,
                                                            key: "zzz-wrong"}})
        steps = [s.model_copy(update={"action": bad}) if s.index == first.index else s
                 for s in ended.steps]
        # Re-run the changed actions so the stored state matches them.
        phone = SimPhone()
        import json

        from services.dataflow.tasks import final_state_json, instance_of
        phone.reset(instance_of(task))
        for s in steps:
            phone.act(s.action)
        ref = BlobStore(tmp_path).put(json.dumps(final_state_json(phone.state)).encode())
        changed = ended.model_copy(update={"steps": steps, "final_state": ref})
        out = decide(known(task), changed, world)
        if out[0].passed:
            continue
        assert out[1].category == "wrong_arguments" and out[1].step_index == first.index
        return
    pytest.fail("no template gave a failing wrong-argument episode")


def test_random_policy_failures_get_taxonomy_categories(world: World, tmp_path: Path) -> None:
    categories = set()
    for template in range(12):
        task = proposed(template=template)
        _, ended = roll(task, tmp_path, policy="random")
        out = decide(known(task), ended, world)
        if len(out) == 2:
            categories.add(out[1].category)
            assert out[1].summary
    assert categories and categories <= set(FAILURE_CATEGORIES)
