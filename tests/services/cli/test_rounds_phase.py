"""The harness round of `flywheel run`: after each generation, the new model's failures evolve
the harness; the per-round table is Parquet; failure traces and harness events go to the bus,
the archiver stores them, and `flywheel sql` traces a promotion to its failures."""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from devices.harness.spec import HarnessSpec, ToolPolicy
from devices.suite.policies import OraclePolicy
from schemas.envelope import Event
from schemas.topics import TOPICS
from services.archiver.service import build_archiver
from services.archiver.settings import ArchiverSettings
from services.archiver.store import ArchiveStore
from services.cli.main import app
from services.cli.rounds_phase import (
    HarnessRoundConfig,
    HarnessRounds,
    competence_templates,
    round_templates,
)
from services.dataflow.evolution.delta import normalise
from services.dataflow.registry import HarnessRegistry
from streams.admin import create_topics
from streams.producer import TypedProducer
from trainer.loop import publisher

pytestmark = pytest.mark.integration

DEFAULT = HarnessSpec.default().to_json_dict()
# An earlier harness that hides the texting tool: the oracle of every texting template hits it.
DEGRADED = normalise({**DEFAULT, "tools": ToolPolicy(hidden=("messages.send",)).model_dump()})
TOPICS_USED = [TOPICS["flywheel.failures"], TOPICS["flywheel.harness"]]
#: Guards against a hang only: the archive should hold what was sent within a few seconds.
ARCHIVE_WAIT_S = 60

runner = CliRunner()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from trainer.models import build_tiny

    return build_tiny(tmp_path_factory.mktemp("tiny") / "tiny")


@pytest.fixture
def bus(bootstrap: str) -> Iterator[tuple[Any, list[Any]]]:
    """A real producer on the registered failure and harness topics (the run's publisher)."""
    create_topics(bootstrap, TOPICS_USED, with_dlq=True)
    sent: list[Any] = []
    with TypedProducer(bootstrap, client_id=f"rounds-test-{uuid.uuid4().hex[:6]}") as producer:
        yield publisher(producer, sent), sent
        producer.flush()
        for future in sent:
            future.get(timeout=30)


def summary(generation: int, path: Path) -> Any:
    """What trainer.loop.run_generations hands `on_generation` (the fields the round reads)."""
    return SimpleNamespace(generation=generation, checkpoint_id=f"ck{generation}",
                           checkpoint_dir=path)


def archive(bootstrap: str, folder: Path, wanted: set[str]) -> ArchiveStore:
    """The real archiver on the failure and harness topics until `wanted` ids are stored."""
    store = ArchiveStore(folder)
    settings = ArchiverSettings(archive_dir=folder, group_id=f"rounds-{uuid.uuid4().hex[:8]}",
                                flush_interval_s=0.2)
    archiver, source = build_archiver(bootstrap, settings, folder, topics=TOPICS_USED)
    deadline = time.monotonic() + ARCHIVE_WAIT_S
    try:
        archiver.run(lambda: (time.monotonic() > deadline
                              or (store.exists() and wanted <= store.event_ids())))
    finally:
        source.close()
    missing = wanted - store.event_ids()
    assert not missing, f"{len(missing)} events not archived within {ARCHIVE_WAIT_S} s"
    return store


def sql(archive_dir: Path, query: str) -> list[dict[str, Any]]:
    result = runner.invoke(app, ["sql", "--archive", str(archive_dir), "--json", query])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_template_sampling_is_seeded_and_serves_every_split() -> None:
    from devices.suite.registry import templates_for

    picked = round_templates(3, seed=0)
    assert picked == round_templates(3, seed=0) and len(picked) == 3
    assert round_templates(3, seed=1) != picked
    for split in ("train", "dev", "test"):
        assert set(picked) <= {t.name for t in templates_for(split)}
    held_out = {t.name for t in templates_for("test")} - {t.name for t in templates_for("dev")}
    assert held_out and not held_out & set(round_templates(0, seed=0))


def test_templates_are_picked_by_competence_never_one_always_solved() -> None:
    common = round_templates(0, seed=0)
    half, quarter, zero, solved = common[:4]
    scores = {half: 0.5, quarter: 0.25, zero: 0.0, solved: 1.0}
    assert competence_templates(scores, 2, seed=0) == sorted([half, quarter])
    assert competence_templates(scores, 3, seed=0) == sorted([half, quarter, zero])
    everything = competence_templates(scores, 0, seed=0)
    assert solved not in everything and set(everything) == set(common) - {solved}
    # unscored templates fill in only after every partly solved and failed one
    picked = competence_templates(scores, 5, seed=0)
    assert {half, quarter, zero} < set(picked) and solved not in picked and len(picked) == 5
    # a template outside train ∩ dev ∩ test is never picked, whatever its score
    assert competence_templates({"no_such_template": 0.5}, 1, seed=0) != ["no_such_template"]


def test_a_round_takes_its_templates_from_the_checkpoints_dev_scores(tmp_path: Path) -> None:
    """No model runs here: only the pick and what the summary says of it."""
    common = round_templates(0, seed=0)
    config = HarnessRoundConfig(templates=1)
    rounds = HarnessRounds(tmp_path / "var", config, run_id="pick", base_model=tmp_path / "base",
                           load=lambda path: OraclePolicy())
    rounds.pick_templates(1, {common[0]: 1.0, common[1]: 0.4})
    assert rounds.templates == [common[1]]
    assert "by dev score" in rounds.picked[1] and "0.40" in rounds.picked[1]
    named = HarnessRounds(tmp_path / "var2", HarnessRoundConfig(names=(common[0],)), run_id="pick",
                          base_model=tmp_path / "base", load=lambda path: OraclePolicy())
    named.pick_templates(1, {common[0]: 1.0, common[1]: 0.4})
    assert named.templates == [common[0]] and named.picked[1] == "named"


def test_two_generations_of_the_tiny_model_give_the_table_decisions_and_bus_events(
        tiny: Path, tmp_path: Path, bootstrap: str, bus: tuple[Any, list[Any]]) -> None:
    """Plumbing with the real model: it fails, the oracle's solved episodes give proposals,
    the gate rejects them (no gain with this model), and the registry stays where it was."""
    emit, sent = bus
    emitted: list[Event] = []
    data_dir = tmp_path / "var"
    config = HarnessRoundConfig(names=("alarm_off",), n_per_template=2, max_proposals=1,
                                max_steps=2, max_new_tokens=16)
    rounds = HarnessRounds(data_dir, config, run_id="run-tiny", base_model=tiny,
                           emit=lambda e: (emitted.append(e), emit(e)))
    registry = HarnessRegistry.at_data_dir(data_dir)
    started = registry.current()
    for generation in (1, 2):
        rounds.after_generation(summary(generation, tiny))
    assert rounds.error is None
    for future in sent:
        future.get(timeout=30)

    folder = data_dir / "rounds" / "run-tiny"
    assert {p.name for p in folder.iterdir()} >= {"rounds.parquet", "decisions.parquet",
                                                  "events.parquet", "rounds.png"}
    con = duckdb.connect()
    cells = con.execute(f"SELECT generation, condition, split FROM '{folder}/rounds.parquet' "
                        "ORDER BY ALL").fetchall()
    assert cells == sorted((g, c, s) for g in (1, 2) for c in ("before", "model", "harness",
                                                                 "both") for s in ("dev", "test"))
    decisions = con.execute(f"SELECT generation, outcome, motivated_by FROM "
                            f"'{folder}/decisions.parquet'").fetchall()
    assert decisions and all(len(ids) >= 2 for _, _, ids in decisions)
    assert all(outcome != "promoted" for _, outcome, _ in decisions)
    traced = {e.event_id for e in emitted if e.type == "failure.traced"}
    assert {i for _, _, ids in decisions for i in ids} <= traced
    # nothing passed: the registry's current version and history are as they were
    assert registry.current() == started and len(registry.history()) == 1
    rows = dict(rounds.summary_rows())
    assert "unchanged" in rows["harness now"] and "no_gain" in rows["harness round 1"]
    assert rounds.table() is not None and rounds.table().row_count == 4

    # the failure traces and harness events went to the bus: the archiver stores them all
    store = archive(bootstrap, tmp_path / "archive", {e.event_id for e in emitted})
    types = sql(store.root, "SELECT type, count(*) AS n FROM events WHERE event_id IN ("
                + ", ".join(f"'{e.event_id}'" for e in emitted) + ") GROUP BY type")
    assert {r["type"]: r["n"] for r in types} == {
        t: sum(e.type == t for e in emitted) for t in {e.type for e in emitted}}
    assert {"failure.traced", "harness.proposed", "harness.rejected"} <= {r["type"] for r in types}


def test_a_promotion_in_a_round_is_traced_to_its_failures_with_flywheel_sql(
        tmp_path: Path, bootstrap: str, bus: tuple[Any, list[Any]]) -> None:
    """A scripted weak policy (the oracle behind a harness that hides messages.send) must get
    the tool shown again; the archive ties the promotion to the failures that motivated it."""
    emit, sent = bus
    emitted: list[Event] = []
    data_dir = tmp_path / "var"
    registry = HarnessRegistry.at_data_dir(data_dir)
    registry.init(DEGRADED)  # what rollouts run in now
    run_id = f"run-{uuid.uuid4().hex[:8]}"
    rounds = HarnessRounds(data_dir, HarnessRoundConfig(templates=0, n_per_template=2),
                           run_id=run_id, base_model=tmp_path / "base",
                           emit=lambda e: (emitted.append(e), emit(e)),
                           load=lambda path: OraclePolicy())
    for generation in (1, 2):
        rounds.after_generation(summary(generation, tmp_path / f"gen{generation}"))
    assert rounds.error is None
    (promotion,) = rounds.report.promotions
    assert promotion.generation == 1
    assert registry.current() == promotion.harness == DEFAULT["version"]
    assert [h.reason for h in registry.history()] == ["init", "gate"]
    assert rounds.report.score(1, "harness", "dev") > rounds.report.score(1, "before", "dev")
    assert rounds.report.score(1, "harness", "test") > rounds.report.score(1, "before", "test")
    rows = dict(rounds.summary_rows())
    assert "promoted this run" in rows["harness now"]
    assert rows["harness rounds"].startswith("every template × 2 instance(s)")
    assert f"and {len(rounds.templates) - 6} more" in rows["harness rounds"]
    assert "promoted" in rows["harness round 1"] and "promoted" not in rows["harness round 2"]
    for future in sent:
        future.get(timeout=30)

    store = archive(bootstrap, tmp_path / "archive", {e.event_id for e in emitted})
    # the query the README gives: which archived failures motivated each promotion
    traced = sql(store.root, f"""
        SELECT p.payload->>'proposal_id' AS proposal, f.event_id AS failure,
               f.payload->>'category' AS category, f.payload->>'task_id' AS task
        FROM harness p,
             unnest(CAST(json_extract(p.payload, '$.motivated_by') AS VARCHAR[])) AS m(failure_id)
        JOIN failures f ON f.event_id = m.failure_id
        WHERE p.type = 'harness.promoted' AND p.correlation_id = '{run_id}'
        ORDER BY failure""")
    assert [r["failure"] for r in traced] == sorted(promotion.motivated_by)
    assert {r["proposal"] for r in traced} == {promotion.proposal_id}
    assert {r["category"] for r in traced} == {"wrong_tool"}
    # …and the rounds table is queryable through `flywheel sql` too
    cells = sql(store.root, f"SELECT condition, split, overall FROM "
                            f"'{data_dir}/rounds/{run_id}/rounds.parquet' WHERE generation = 1")
    assert len(cells) == 8


def test_a_failing_round_is_reported_and_training_goes_on(tmp_path: Path) -> None:
    rounds = HarnessRounds(tmp_path, HarnessRoundConfig(names=("alarm_off",)),
                           run_id="broken", base_model=tmp_path / "base",
                           load=lambda path: (_ for _ in ()).throw(OSError(f"no model at {path}")))
    rounds.after_generation(summary(1, tmp_path / "gen1"))
    assert rounds.error is not None and "no model at" in rounds.error
    rows = dict(rounds.summary_rows())
    assert "no model at" in rows["[red]harness round failed[/]"]
    rounds.after_generation(summary(2, tmp_path / "gen2"))  # no further rounds
    assert rounds.report.rows == []


def test_an_unreadable_registry_is_one_sentence_and_the_model_still_trains(
        tmp_path: Path) -> None:
    from services.cli.train_phase import TrainingPhase

    registry = HarnessRegistry.at_data_dir(tmp_path)
    registry.init(DEFAULT)
    registry.current_path.write_text("0123456789ab\n")  # names a version never stored
    phase = TrainingPhase("127.0.0.1:1", tmp_path, 1, "tiny")
    assert phase.harness_rounds("run-x", tmp_path / "base", lambda e: None) is None
    assert phase.rounds_error is not None and "0123456789ab" in phase.rounds_error
    phase.started.set()
    rows = dict(phase.summary_rows())
    assert rows["[red]harness rounds not run[/]"] == phase.rounds_error
    off = TrainingPhase("127.0.0.1:1", tmp_path, 1, "tiny",
                        rounds=HarnessRoundConfig(enabled=False))
    assert off.harness_rounds("run-x", tmp_path / "base", lambda e: None) is None
    off.started.set()
    assert dict(off.summary_rows())["harness rounds"] == "off (--harness-rounds turns them on; they are on by default with --quick)"


def test_a_round_that_fails_half_way_leaves_no_half_row_in_the_table(tmp_path: Path) -> None:
    rounds = HarnessRounds(tmp_path, HarnessRoundConfig(names=("alarm_off",)), run_id="half",
                           base_model=tmp_path / "base", load=lambda path: OraclePolicy())
    rounds.after_generation(summary(1, tmp_path / "gen1"))
    assert rounds.error is None and len(rounds.report.rows) == 8

    def half_way(generation: int, before: Any, after: Any, collected: Any) -> Any:
        """Scores one cell of the round, then runs out of memory."""
        list(collected)
        first = rounds.report.rows[0]
        rounds.report.rows.append(dataclasses.replace(first, generation=generation))
        raise MemoryError("out of memory while scoring")

    rounds.rounds.round = half_way  # type: ignore[method-assign]
    rounds.after_generation(summary(2, tmp_path / "gen2"))
    assert rounds.error is not None and "out of memory" in rounds.error
    assert {r.generation for r in rounds.report.rows} == {1}
    assert rounds.table() is not None and rounds.table().row_count == 2
    rows = dict(rounds.summary_rows())
    assert "harness round 1" in rows and "harness round 2" not in rows


def test_a_stop_during_a_round_ends_it_as_a_stop_not_a_failure(tmp_path: Path) -> None:
    import threading

    from trainer.stopping import TrainingStopped

    rounds = HarnessRounds(tmp_path, HarnessRoundConfig(names=("alarm_off",)), run_id="stopped",
                           base_model=tmp_path / "base", load=lambda path: OraclePolicy())
    rounds.stop = threading.Event()
    rounds.stop.set()
    with pytest.raises(TrainingStopped, match="during a harness round"):
        rounds.after_generation(summary(1, tmp_path / "gen1"))
    assert rounds.error is None and rounds.report.rows == []
