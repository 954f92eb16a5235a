"""Rounds: model alone, harness alone and both, per generation, written for DuckDB."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from schemas.envelope import Event
from services.dataflow.registry import HarnessRegistry
from services.evolver.rounds import Rounds, RoundsConfig, plot_rounds, run_rounds
from tests.services.evolver.helpers import SPEC, failure, has_skill, runner, solved, task


@dataclass(frozen=True)
class Scripted:
    """A stand-in model: training raises its level, which solves more set_alarm tasks."""

    name: str
    level: int


def train(model: Scripted, generation: int) -> Scripted:
    return Scripted(f"scripted-g{generation}", model.level + 1)


def collect(model: Scripted, spec: Mapping[str, Any], generation: int) -> list[Event]:
    """Rollouts on train tasks: texting fails without the skill (misroutes), two are solved."""
    events: list[Event] = [task("text_relative", i, "Text my sister") for i in range(6)]
    events += [e for i, (p, c, b) in enumerate([("Priya", "ct_1", "late"), ("Hana", "ct_2", "hi")])
               for e in solved("text_relative", i, p, c, b)]
    if not has_skill(spec, "do_text_relative"):
        events += [failure("skill_misroute", "text_relative", i) for i in range(2, 6)]
    return events


def score(model: Scripted, spec: Mapping[str, Any], split: str) -> list[Any]:
    def effect(s: Mapping[str, Any], sp: str, template: str, i: int) -> float | None:
        if template == "text_relative" and has_skill(s, "do_text_relative"):
            return 1.0
        if template == "set_alarm":
            return 1.0 if i < 2 * model.level else 0.0
        return None
    return runner(effect)(spec, split)


def test_rounds_show_each_sides_contribution_and_the_promotion(tmp_path: Path) -> None:
    registry = HarnessRegistry.at_data_dir(tmp_path)
    emitted: list[Event] = []
    report = run_rounds(Scripted("scripted-g0", 0), SPEC, train=train, collect=collect,
                        score=score, config=RoundsConfig(generations=2, run_id="r1"),
                        emit=emitted.append, registry=registry)
    assert len(report.rows) == 2 * 4 * 2
    for split in ("dev", "test"):
        before = report.score(1, "before", split)
        assert report.score(1, "model", split) > before  # training helped set_alarm
        assert report.score(1, "harness", split) > before  # the skill helped texting
        assert report.score(1, "both", split) > max(report.score(1, "model", split),
                                                    report.score(1, "harness", split))
        # generation 2: no new failures, so the harness alone changes nothing
        assert report.score(2, "harness", split) == report.score(2, "before", split)
    (promotion,) = report.promotions
    assert promotion.generation == 1 and promotion.dev_delta and promotion.dev_delta > 0
    assert promotion.motivated_by == [f"fail-skill_misroute-text_relative-{i}" for i in range(2, 6)]
    assert registry.current() == promotion.harness == report.rows[-1].harness
    # the failure traces go out first (the archive holds what promotions name), then the gate
    assert [e.type for e in emitted] == ["failure.traced"] * 4 + [
        "harness.proposed", "harness.evaluated", "harness.evaluated", "harness.promoted"]
    assert [e.event_id for e in emitted[:4]] == promotion.motivated_by
    assert report.failures == {1: 4, 2: 0}
    table = report.table()
    assert [c.header for c in table.columns][2:6] == ["before", "model alone", "harness alone",
                                                      "both"]
    assert table.row_count == 4  # two generations × dev, test

    paths = report.write(tmp_path / "rounds" / "r1")
    con = duckdb.connect()
    table = con.execute(
        f"SELECT generation, condition, split, overall FROM '{paths['rounds']}' "
        "WHERE split = 'dev' ORDER BY generation, condition").fetchall()
    assert [(g, c) for g, c, _, _ in table][:4] == [(1, "before"), (1, "both"), (1, "harness"),
                                                    (1, "model")]
    traced = con.execute(
        f"SELECT proposal_id, unnest(motivated_by) AS failure_id FROM '{paths['decisions']}' "
        "WHERE outcome = 'promoted' ORDER BY failure_id").fetchall()
    assert [f for _, f in traced] == promotion.motivated_by
    # …and each motivating id is a failure trace stored beside the harness events
    joined = con.execute(
        f"SELECT json_extract_string(e.payload, '$.category') AS category, count(*) "
        f"FROM (SELECT unnest(motivated_by) AS failure_id FROM '{paths['decisions']}' "
        f"      WHERE outcome = 'promoted') d "
        f"JOIN '{paths['events']}' e ON e.event_id = d.failure_id GROUP BY category").fetchall()
    assert joined == [("skill_misroute", 4)]


def test_a_round_whose_proposals_fail_the_gate_keeps_the_harness(tmp_path: Path) -> None:
    def no_help(model: Scripted, spec: Mapping[str, Any], split: str) -> list[Any]:
        return runner(lambda *a: None)(spec, split)

    report = run_rounds(Scripted("s", 0), SPEC, train=train, collect=collect, score=no_help,
                        config=RoundsConfig(generations=1, run_id="r2"))
    assert report.promotions == []
    assert [d.outcome for d in report.decisions] == ["no_gain"]
    assert report.spec == SPEC or report.spec["version"] == SPEC["version"]
    assert report.score(1, "harness", "dev") == report.score(1, "before", "dev")


def test_a_round_whose_proposal_makes_things_worse_rejects_it_and_keeps_the_registry(
        tmp_path: Path) -> None:
    def hurts(model: Scripted, spec: Mapping[str, Any], split: str) -> list[Any]:
        def effect(s: Mapping[str, Any], sp: str, template: str, i: int) -> float | None:
            if template == "text_relative" and has_skill(s, "do_text_relative"):
                return 0.0  # the skill breaks the tasks it was made for
            return None
        return runner(effect)(spec, split)

    registry = HarnessRegistry.at_data_dir(tmp_path)
    emitted: list[Event] = []
    report = run_rounds(Scripted("s", 0), SPEC, train=train, collect=collect, score=hurts,
                        config=RoundsConfig(generations=1, run_id="r3"), emit=emitted.append,
                        registry=registry)
    (decision,) = report.decisions
    assert decision.outcome == "family_regression" and decision.dev_delta is not None
    assert decision.dev_delta < 0 and decision.test_delta is None  # never reached test
    assert [e.type for e in emitted if e.type.startswith("harness.")] == [
        "harness.proposed", "harness.evaluated", "harness.rejected"]
    assert registry.current() == SPEC["version"]
    assert [h.reason for h in registry.history()] == ["init"]
    assert report.score(1, "harness", "dev") == report.score(1, "before", "dev")
    assert report.score(1, "both", "test") == report.score(1, "model", "test")


def test_rounds_one_at_a_time_give_what_run_rounds_gives(tmp_path: Path) -> None:
    whole = run_rounds(Scripted("scripted-g0", 0), SPEC, train=train, collect=collect,
                       score=score, config=RoundsConfig(generations=2, run_id="same"))
    rounds: Rounds[Scripted] = Rounds(SPEC, score=score, config=RoundsConfig(run_id="same"))
    theta = Scripted("scripted-g0", 0)
    for generation in (1, 2):
        new = train(theta, generation)
        decided = rounds.round(generation, theta, new, collect(new, rounds.spec, generation))
        assert [d.generation for d in decided] == [generation] * len(decided)
        theta = new
    assert rounds.report.rows == whole.rows
    assert rounds.report.decisions == whole.decisions
    assert rounds.spec["version"] == whole.spec["version"] != SPEC["version"]
    png = plot_rounds(rounds.report, tmp_path / "rounds.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_two_runs_making_the_same_proposal_publish_distinct_events() -> None:
    """Proposal ids are content addresses; the archive drops repeated event ids, so each
    run's harness events carry ids of their own (and keep their causal links)."""
    reports = [run_rounds(Scripted("scripted-g0", 0), SPEC, train=train, collect=collect,
                          score=score, config=RoundsConfig(generations=1, run_id=run))
               for run in ("a", "b")]
    harness = [[e for e in r.events if e.type.startswith("harness.")] for r in reports]
    assert [e.proposal_id for e in harness[0]] == [e.proposal_id for e in harness[1]]  # type: ignore[attr-defined]
    assert not {e.event_id for e in harness[0]} & {e.event_id for e in harness[1]}
    for events in harness:
        ids = {e.event_id for e in events}
        assert all(e.causation_id in ids for e in events[1:]), "a cause is not in the run"
