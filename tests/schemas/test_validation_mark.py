"""Value objects know whether validation built them: model_construct and model_copy(update=) do not."""

from __future__ import annotations

import copy

from schemas.actions import Click
from schemas.envelope import is_validated
from schemas.episodes import EpisodeEnded, Step
from schemas.observations import Observation
from schemas.verdicts import VerdictIssued

VERDICT = {"source": "test/0", "correlation_id": "run-1", "episode_id": "ep-0",
           "task_id": "task-1", "checker": "final_state", "score": 0.5, "passed": False}


def _episode(steps: list[Step]) -> EpisodeEnded:
    return EpisodeEnded(source="test/0", correlation_id="run-1", episode_id="ep-0",
                        task_id="task-1", device_id="sim-0", environment="sim",
                        policy="scripted", outcome="finished", steps=steps)


def _step(action: Click) -> Step:
    return Step(index=0, action=action, observation=Observation(step=1, clock_ms=0))


def test_built_by_validation_is_validated() -> None:
    event = VerdictIssued(**VERDICT)
    assert is_validated(event)
    assert is_validated(VerdictIssued.model_validate(VERDICT))
    assert is_validated(VerdictIssued.model_validate_json(event.model_dump_json()))
    assert is_validated(_episode([_step(Click(index=1))]))


def test_model_construct_is_not_validated_even_when_passed_through_validation() -> None:
    built = VerdictIssued.model_construct(**{**VERDICT, "score": 7})
    assert not is_validated(built)
    # pydantic hands an existing instance back without re-validating its fields.
    assert not is_validated(VerdictIssued.model_validate(built))


def test_a_constructed_value_inside_a_validated_event_makes_it_unvalidated() -> None:
    bad_click = Click.model_construct(action_type="click", index=-1, x=None, y=None)
    assert not is_validated(_episode([_step(bad_click)]))
    assert not is_validated(_episode([Step.model_construct(
        index=0, action=Click(index=1), observation=Observation(step=1, clock_ms=0),
        thought=None)]))


def test_model_copy_with_update_is_not_validated_and_plain_copies_keep_the_mark() -> None:
    event = VerdictIssued(**VERDICT)
    assert not is_validated(event.model_copy(update={"score": 7}))
    assert is_validated(event.model_copy())
    assert is_validated(event.model_copy(deep=True))
    assert is_validated(copy.deepcopy(event))
    assert not is_validated(VerdictIssued.model_construct(**VERDICT).model_copy())


def test_equality_and_hash_ignore_how_a_value_was_built() -> None:
    event = VerdictIssued(**VERDICT)
    assert event == VerdictIssued.model_construct(**event.__dict__)
    assert event == event.model_copy(update={"score": 0.5})
    assert event != event.model_copy(update={"score": 0.6})
    assert Click(index=1) == Click.model_construct(**Click(index=1).__dict__)
    assert hash(Click(index=1)) == hash(Click.model_construct(**Click(index=1).__dict__))
