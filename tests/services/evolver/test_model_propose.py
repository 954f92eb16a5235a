"""Model-written proposals: parsed, applied, dropped when bad, and gated like the rules' ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemas.harness import HarnessProposed
from services.dataflow.evolution.decide import handle, initial_state
from services.dataflow.evolution.propose import trace_of
from services.evolver.gate import evaluate_proposal
from services.evolver.model_propose import ModelProposer, load_local, parse_changes, prompt_for
from tests.services.evolver.helpers import SPEC, failure, runner

LINE = {"component": "prompt", "op": "add", "name": "memory first",
        "spec": {"text": "Read memory before asking the user."}}
TRACES = [trace_of(failure("memory_miss", "recall_address", i),
                   {f"recall_address#{i}": "recall_address"}) for i in range(2)]


def test_the_answer_is_parsed_from_prose() -> None:
    (change,) = parse_changes(f"Sure! Here it is:\n{json.dumps([LINE])}\nHope it helps.")
    assert (change.component, change.op, change.spec["text"]) == (
        "prompt", "add", "Read memory before asking the user.")


@pytest.mark.parametrize(("answer", "message"), [
    ("no idea", "no JSON list"),
    ("[1, 2", "no JSON list"),
    ("[{'a': 1}]", "not JSON"),
    ("[]", "empty"),
    ('[{"component": "wallpaper", "op": "add", "name": "x"}]', "invalid at component"),
])
def test_bad_answers_are_refused_in_one_sentence(answer: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_changes(answer)


def test_a_model_proposal_names_its_failures_and_goes_through_the_same_gate() -> None:
    prompts: list[str] = []

    def author(prompt: str) -> str:
        prompts.append(prompt)
        return json.dumps([LINE])

    proposer = ModelProposer(author)
    (proposal,) = proposer.propose(SPEC, TRACES)
    assert "category=memory_miss" in prompts[0] and "task=recall_address" in prompts[0]
    assert proposal.rule == "model" and proposal.motivated_by == tuple(t.event_id for t in TRACES)
    state = initial_state(SPEC)
    event = HarnessProposed(source="t", correlation_id="r", proposal_id=proposal.proposal_id,
                            base_harness=proposal.base, changes=list(proposal.changes),
                            motivated_by=list(proposal.motivated_by))
    state, _ = handle(state, event)
    evaluated = evaluate_proposal(state.spec, event, runner(lambda *a: None))
    state, out = handle(state, evaluated[0])
    assert [(e.type, e.reason) for e in out] == [("harness.rejected", "no_gain")]


def test_bad_or_inapplicable_answers_are_dropped_and_counted() -> None:
    answers = iter(["I would add a skill.",
                    json.dumps([{"component": "skill", "op": "update", "name": "nope",
                                 "spec": {"description": "x"}}])])
    proposer = ModelProposer(lambda prompt: next(answers))
    assert proposer.propose(SPEC, TRACES) == []
    assert proposer.propose(SPEC, TRACES) == []
    assert proposer.stats.asked == 2 and proposer.stats.proposed == 0
    assert proposer.stats.dropped == {"unparsable": 1, "DeltaError": 1}


def test_the_prompt_shows_what_the_model_may_change() -> None:
    text = prompt_for(SPEC, ("memory_miss", "any", "recall_address"), TRACES)
    assert "Read before you write." in text and '"context_entries": 0' in text


def test_a_missing_model_directory_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no model directory"):
        load_local(tmp_path / "missing")


def test_the_service_asks_the_model_after_the_rules(tmp_path: Path) -> None:
    from services.dataflow.evolution.settings import load_evolver_settings
    from services.dataflow.registry import HarnessRegistry
    from services.dataflow.store import Stored
    from services.evolver.service import EvolverService

    registry = HarnessRegistry.at_data_dir(tmp_path)
    registry.init(SPEC)
    service = EvolverService(registry, load_evolver_settings(evaluate=False),
                             author=lambda prompt: json.dumps([LINE]))
    out = []
    for i in range(2):
        event = failure("wrong_answer", "set_alarm", i)
        out += service.handle(Stored(event, "flywheel.failures"))
        service.apply(Stored(event, "flywheel.failures"))
        for _, produced in out[-1:]:
            service.apply(Stored(produced, "flywheel.harness"))
    (topic, proposal), = out
    assert topic.name == "flywheel.harness" and proposal.type == "harness.proposed"
    assert proposal.changes[0].spec == {"text": "Read memory before asking the user."}
    assert proposal.motivated_by == ["fail-wrong_answer-set_alarm-0",
                                     "fail-wrong_answer-set_alarm-1"]
