"""The evolver on the real suite: SimPhone in the harness, the oracle, the verifier's traces."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from devices.harness.spec import HarnessSpec, ToolPolicy
from devices.suite.policies import OraclePolicy, Policy
from schemas.envelope import Event
from schemas.harness import HarnessChange, HarnessProposed
from services.evolver.decide import handle, initial_state
from services.evolver.delta import normalise
from services.evolver.gate import evaluate_proposal
from services.evolver.paired import summarise
from services.evolver.registry import HarnessRegistry
from services.evolver.rounds import RoundsConfig, run_rounds
from services.evolver.suite_runner import suite_collector, suite_runner

DEFAULT = HarnessSpec.default().to_json_dict()
# An earlier harness that hides the texting tool: six templates' oracles need it.
DEGRADED = normalise({**DEFAULT, "tools": ToolPolicy(hidden=("messages.send",)).model_dump()})


@dataclass(frozen=True)
class OracleModel:
    name: str = "oracle"

    def policy(self) -> Policy:
        return OraclePolicy()


def score(model: OracleModel, spec: Any, split: Any) -> Any:
    return suite_runner(model.policy, n_per_template=2)(spec, split)


def test_the_rounds_show_a_hidden_tool_again_and_rollback_restores_the_scores(
        tmp_path: Path) -> None:
    registry = HarnessRegistry.at_data_dir(tmp_path)
    emitted: list[Event] = []
    collect = suite_collector(n_per_template=2)
    report = run_rounds(OracleModel(), DEGRADED, train=lambda m, g: m, collect=collect,
                        score=score, config=RoundsConfig(generations=1, run_id="e2e"),
                        emit=emitted.append, registry=registry)
    (promotion,) = report.promotions
    proposed = next(e for e in emitted if isinstance(e, HarnessProposed))
    assert [c.model_dump() for c in proposed.changes] == [
        {"component": "tool", "op": "add", "name": "messages.send", "spec": {}}]
    # the promotion names the verifier's failure traces of the episodes that hit the wall
    traces = [e for e in collect(OracleModel(), DEGRADED, 1) if e.type == "failure.traced"]
    assert promotion.motivated_by == sorted(t.event_id for t in traces)
    assert len(promotion.motivated_by) >= 2
    for split in ("dev", "test"):
        assert report.score(1, "harness", split) > report.score(1, "before", split)
    assert report.score(1, "harness", "dev") == pytest.approx(1.0)
    assert promotion.test_delta is not None and promotion.test_delta > 0
    assert registry.current() == promotion.harness == HarnessSpec.default().version

    # rollback: the earlier harness is current again and scores exactly as before
    before = score(OracleModel(), DEGRADED, "dev")
    registry.rollback(DEGRADED["version"])
    again = score(OracleModel(), registry.get("current"), "dev")
    assert again == before
    assert summarise(again)[0] == report.score(1, "before", "dev")


def test_a_proposal_that_hides_a_needed_tool_is_rejected_on_the_real_suite() -> None:
    state = initial_state(DEFAULT)
    proposal = HarnessProposed(
        source="test", correlation_id="run", proposal_id="hp-hide", base_harness=state.current,
        changes=[HarnessChange(component="tool", op="remove", name="messages.send")])
    state, _ = handle(state, proposal)
    evaluated = evaluate_proposal(state.spec, proposal, lambda s, sp: score(OracleModel(), s, sp))
    assert [(e.split, e.verdict, e.passed) for e in evaluated] == [("dev", "worse", False)]
    state, out = handle(state, evaluated[0])
    assert [(e.type, e.reason) for e in out] == [("harness.rejected", "family_regression")]
    assert state.current == DEFAULT["version"]
