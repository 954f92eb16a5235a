"""The evolver on the real suite: SimPhone in the harness, the oracle, the verifier's traces."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from devices.harness.harness import Harness
from devices.harness.spec import HarnessSpec, ToolPolicy
from devices.sim import SimPhone
from devices.suite.instances import generate_split
from devices.suite.policies import OraclePolicy, Policy
from schemas.envelope import Event
from schemas.harness import HarnessChange, HarnessProposed
from services.dataflow.evolution.decide import handle, initial_state
from services.dataflow.evolution.delta import MAX_CHANGES, normalise
from services.dataflow.evolution.paired import summarise
from services.dataflow.registry import HarnessRegistry
from services.evolver.gate import evaluate_proposal
from services.evolver.rounds import RoundsConfig, run_rounds
from services.evolver.suite_runner import play_episode, suite_collector, suite_runner

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


def _tools_used(split: str) -> dict[str, set[str]]:
    """Tool → templates whose oracle calls it (directly, in a skill or by a sub-agent)."""
    used: dict[str, set[str]] = {}
    harness = Harness(SimPhone(), HarnessSpec.default())
    for task in generate_split(split, 2, 0):  # type: ignore[arg-type]
        play_episode(harness, task, OraclePolicy())
        for entry in harness.final_state()["log"]:
            if entry["kind"] == "tool_call":
                used.setdefault(entry["name"], set()).add(task.template)
    return used


def test_an_overfitting_proposal_passes_dev_and_is_caught_on_test_on_the_real_suite() -> None:
    dev, test = _tools_used("dev"), _tools_used("test")
    held_out = sorted(t for t in test if t not in dev)  # tools only test's templates need
    # one such tool per held-out template, as many as a delta may carry beside the shown tool
    # (the suite grows; a proposal hiding every test-only tool would be a rewrite, not a delta)
    hidden: dict[str, str] = {}
    for tool in held_out:
        for template in sorted(test[tool]):
            hidden.setdefault(template, tool)
    hide = sorted(set(hidden.values()))[:MAX_CHANGES - 1]
    assert len(hide) >= 2  # hurts more held-out templates than the shown tool helps
    # a tool one dev template and one test template need: hidden in the base harness
    shown = min(t for t in dev if t in test and len(dev[t]) == 1 and len(test[t]) == 1)
    base = normalise({**DEFAULT, "tools": ToolPolicy(hidden=(shown,)).model_dump()})
    state = initial_state(base)
    # shows the tool again (dev improves) but also hides what only held-out tasks use
    proposal = HarnessProposed(
        source="test", correlation_id="run", proposal_id="hp-overfit",
        base_harness=state.current,
        changes=[HarnessChange(component="tool", op="add", name=shown),
                 *[HarnessChange(component="tool", op="remove", name=t) for t in hide]])
    state, _ = handle(state, proposal)
    evaluated = evaluate_proposal(state.spec, proposal, lambda s, sp: score(OracleModel(), s, sp))
    assert [(e.split, e.passed) for e in evaluated] == [("dev", True), ("test", False)]
    assert evaluated[0].delta_low > 0 and evaluated[1].delta < 0
    out = []
    for event in evaluated:
        state, produced = handle(state, event)
        out += produced
    assert [(e.type, e.reason) for e in out] == [("harness.rejected", "overfit")]
    assert state.current == base["version"]
