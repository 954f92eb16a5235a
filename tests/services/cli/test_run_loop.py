"""`flywheel run --examples N` on a fresh data dir: the whole data flywheel runs, stops by
itself at a snapshot of N approved examples, and every row traces back to archived events."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from services.archiver.store import ArchiveStore
from streams.broker import free_port
from tests.services.cli.run_env import run_env

pytestmark = pytest.mark.integration

#: Guards against hangs only; not a speed assertion (bench/loop.py measures speed).
WAIT_S = 300
EXAMPLES = 80


def _run_env(data_dir: Path) -> dict[str, str]:
    return run_env(data_dir, free_port(), flush_s=0.5, columns=250)


def test_run_examples_leaves_a_traceable_train_only_snapshot(tmp_path: Path) -> None:
    data_dir = tmp_path / "var"
    env = _run_env(data_dir)
    # The default path: the rollout plays on the run's sim phones through their device runners.
    result = subprocess.run([sys.executable, "-m", "services.cli.main", "run", "--quick", "--examples",
                             str(EXAMPLES), "--generations", "0"], env=env, capture_output=True,
                            text=True, timeout=WAIT_S, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert f"flywheel run ({EXAMPLES} examples)" in output
    assert "approved examples" in output and "snapshot" in output
    # The summary names the snapshot that reached the target (the curator may have written
    # another one from episodes still in flight when the run stopped).
    snapshots = [p for p in (data_dir / "snapshots").glob("*/data.parquet")
                 if p.parent.name in output]
    assert snapshots, output
    rows = pq.read_table(snapshots[0]).to_pylist()
    assert len(rows) >= EXAMPLES
    assert {r["split"] for r in rows} == {"train"}
    manifest = json.loads((snapshots[0].parent / "manifest.json").read_text())
    assert manifest["rows"] == len(rows)
    # --quick's oracle slips once in a share of its episodes: rows after a slip teach the way on
    # (`recovery`), and no row teaches a slip (a wrong id ends in "x", a wrong verb in "_all").
    assert 0 < manifest["counts"]["recovery_rows"] == sum(r["recovery"] for r in rows) < len(rows)
    assert not [r["completion"] for r in rows if re.search(r'[0-9a-f]{6}x"|_all"', r["completion"])]
    assert manifest["admission_policy"].startswith("automatic stand-in")
    # Every row's task, episode, verdict and decision event is in the archive, and so is the
    # dataset.snapshotted that announced it.
    archived = ArchiveStore(data_dir / "archive").event_ids()
    from services.dataflow.ids import derived_id
    assert derived_id("dataset.snapshotted", manifest["snapshot_id"]) in archived
    for what in ("task", "episode", "verdict", "decision"):
        missing = {r[f"{what}_event_id"] for r in rows} - archived
        assert not missing, f"{len(missing)} {what} events of the snapshot are not archived"
    # … at the topic/partition/offset the row names.
    con = duckdb.connect()
    files = [str(p) for p in ArchiveStore(data_dir / "archive").files()]
    found = con.execute(
        "SELECT count(*) FROM read_parquet(?, hive_partitioning=true) a JOIN "
        "(SELECT unnest(?) AS id, unnest(?) AS part, unnest(?) AS off) r "
        "ON a.event_id = r.id AND a.partition = r.part AND a.offset = r.off",
        [files, [r["episode_event_id"] for r in rows], [r["episode_partition"] for r in rows],
         [r["episode_offset"] for r in rows]]).fetchone()[0]
    assert found == len(rows)
    _assert_every_device_step_is_an_event(con, files)


def _assert_every_device_step_is_an_event(con: duckdb.DuckDBPyConnection, files: list[str]) -> None:
    """Every archived episode's steps that reached the phone (all but the harness's planner
    actions: memory, skills, sub-agents, answers) are one `action.requested` ('act') each, and
    every request of the run has exactly one `observation.recorded` (same episode and step)."""
    from devices.harness.planner import PLANNER_ACTIONS

    events = "read_parquet(?, hive_partitioning=true)"
    ended = con.execute(
        f"SELECT json_extract_string(payload, '$.episode_id'), "
        f"json_extract_string(payload, '$.outcome'), payload FROM {events} "
        f"WHERE type = 'episode.ended'", [files]).fetchall()
    acts = dict(con.execute(
        f"SELECT json_extract_string(payload, '$.episode_id'), count(*) FROM {events} "
        f"WHERE type = 'action.requested' AND json_extract_string(payload, '$.request') = 'act' "
        f"GROUP BY 1", [files]).fetchall())
    assert ended, "no episode was archived"
    finished = [e for e, outcome, _ in ended if outcome == "finished"]
    assert len(finished) == len(ended), [outcome for _, outcome, _ in ended]
    for episode_id, outcome, payload in ended:
        steps = json.loads(payload)["steps"]
        on_device = sum(s["action"]["action_type"] not in PLANNER_ACTIONS for s in steps)
        assert acts.get(episode_id, 0) == on_device, (episode_id, outcome, on_device, acts.get(episode_id))
    assert sum(acts.values()) > 0, "no device action was an event"
    unanswered = con.execute(
        f"SELECT count(*) FROM (SELECT json_extract_string(payload, '$.episode_id') e, "
        f"json_extract(payload, '$.step')::INT s, count(*) FILTER (WHERE type = 'action.requested') a, "
        f"count(*) FILTER (WHERE type = 'observation.recorded') o FROM {events} "
        f"WHERE topic IN ('flywheel.actions', 'flywheel.observations') GROUP BY 1, 2) "
        f"WHERE e IN (SELECT unnest(?)) AND (a != 1 OR o != 1)", [files, finished]).fetchone()[0]
    assert unanswered == 0, f"{unanswered} device steps lack their one request or one answer"


@pytest.mark.timeout(1200)  # a hang guard: the data phase plus two training generations
def test_run_trains_two_generations_on_its_snapshot_and_archives_the_training_events(
        tmp_path: Path) -> None:
    """`flywheel run --generations 2`: data phase, then SFT and GRPO+CARE on the tiny model;
    checkpoints exist, and their checkpoint/eval/feedback events are in the archive."""
    data_dir = tmp_path / "var"
    env = _run_env(data_dir)
    result = subprocess.run([sys.executable, "-m", "services.cli.main", "run", "--quick", "--examples", "40",
                             "--sim-devices", "0", "--generations", "2", "--base-model", "tiny"],
                            env=env, capture_output=True, text=True, timeout=2 * WAIT_S,
                            check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "2 generation(s) trained" in output, output
    assert "generation 1 (sft)" in output and "generation 2 (rl)" in output, output
    runs = [p for p in (data_dir / "checkpoints").iterdir() if p.is_dir()]
    assert len(runs) == 1 and runs[0].name.startswith("run-"), runs  # one folder per run
    checkpoints = sorted(p.name for p in runs[0].iterdir())
    assert checkpoints[:2] == ["gen1", "gen2"], checkpoints
    con = duckdb.connect()
    files = [str(p) for p in ArchiveStore(data_dir / "archive").files()]
    types = dict(con.execute("SELECT type, count(*) FROM read_parquet(?) GROUP BY type",
                             [files]).fetchall())
    assert types.get("checkpoint.saved") == 2, types
    assert types.get("eval.reported") == 2, types
    assert types.get("training.feedback_issued") == 2, types
    # every checkpoint's evaluation carries its general capability (the report shows it)
    general = con.execute("SELECT json_extract(payload, '$.general_perplexity') FROM read_parquet(?) "
                          "WHERE type = 'eval.reported'", [files]).fetchall()
    assert len(general) == 2 and all(g is not None and float(g) > 1.0 for (g,) in general), general

    # Each generation also evolved the harness on the new checkpoint's failures (default
    # sizing): the per-round table is in the summary and in Parquet, four cells × dev/test
    # per generation, and every proposal's motivating failure traces are in the archive.
    assert "harness round 1" in output and "harness round 2" in output, output
    assert "model alone" in output and "harness alone" in output, output
    (folder,) = (data_dir / "rounds").iterdir()
    cells = con.execute(f"SELECT generation, condition, split FROM '{folder}/rounds.parquet' "
                        "ORDER BY ALL").fetchall()
    assert cells == sorted((g, c, s) for g in (1, 2) for c in ("before", "model", "harness",
                                                                 "both") for s in ("dev", "test"))
    assert (folder / "rounds.png").stat().st_size > 0
    motivated = con.execute(f"SELECT DISTINCT unnest(motivated_by) FROM "
                            f"'{folder}/decisions.parquet'").fetchall()
    assert motivated, "no proposal was made from the tiny model's failures"
    archived = ArchiveStore(data_dir / "archive").event_ids()
    assert {m for (m,) in motivated} <= archived
    decided = con.execute(f"SELECT count(*) FROM '{folder}/decisions.parquet'").fetchone()[0]
    files = [str(p) for p in ArchiveStore(data_dir / "archive").files()]  # the final archive
    proposed = con.execute(
        "SELECT count(*) FROM read_parquet(?) WHERE type = 'harness.proposed' "
        "AND correlation_id = ?", [files, folder.name]).fetchone()[0]
    assert proposed == decided, (proposed, decided)

    # The run ends with its five lines, and `flywheel audit` traces the last checkpoint back to
    # the snapshot (sha256 as at training time) and every row's events to the archive.
    for line in ("ran ", "model (last generation against the first generation): ", "details: ", "resume: ", "review: "):
        assert f"\n{line}" in output, (line, output[-1500:])
    gen2 = runs[0] / "gen2"
    audited = subprocess.run([sys.executable, "-m", "services.cli.main", "audit", str(gen2), "--json"],
                             env=env, capture_output=True, text=True, timeout=WAIT_S, check=False)
    assert audited.returncode == 0, audited.stdout + audited.stderr
    report = json.loads(audited.stdout)
    assert report["chain"][0] == report["checkpoint"]["checkpoint_id"] and len(report["chain"]) == 2
    assert report["snapshots"] and all(s["sha256_matches"] for s in report["snapshots"])
    lineage = report["lineage"]
    assert lineage["events_named"] > 0 and lineage["found_in_archive"] == lineage["events_named"]
    assert report["held_out_rows"] == []

    # `flywheel rescore` re-judges every archived episode from its stored final state with
    # today's checkers: none changes here; a checker that now refuses everything changes all.
    rescored = subprocess.run([sys.executable, "-m", "services.cli.main", "rescore", "--json"],
                              env=env, capture_output=True, text=True, timeout=WAIT_S, check=False)
    assert rescored.returncode == 0, rescored.stdout + rescored.stderr
    again = json.loads(rescored.stdout)
    assert again["rejudged"] > 0 and again["changed"] == 0 and again["checker_failed"] == 0, again
    # --checker-version V re-judges only what verifier version V judged
    from services.cli.rescore_cmd import rescore_archive as _rescore
    (version,) = con.execute("SELECT DISTINCT json_extract_string(payload, '$.verifier') FROM read_parquet(?) "
                             "WHERE type = 'verdict.issued'", [files]).fetchone()
    assert _rescore(data_dir / "archive", data_dir / "blobs", checker_version=version)["rejudged"] == again["rejudged"]
    none_of_it = _rescore(data_dir / "archive", data_dir / "blobs", checker_version="verifier/0.0.0-never")
    assert none_of_it["rejudged"] == 0 and none_of_it["other_version"] == again["rejudged"]
    import devices.suite.scoring as scoring_module
    from devices.suite.diff import CheckResult
    from services.cli.rescore_cmd import rescore_archive

    original = scoring_module.score_final_state
    scoring_module.score_final_state = lambda task, final: CheckResult(  # type: ignore[assignment]
        score=0.0, progress=0.0, subgoals=[("refused by a stricter checker", False)], violations=[])
    try:
        stricter = rescore_archive(data_dir / "archive", data_dir / "blobs")
    finally:
        scoring_module.score_final_state = original
    passed_before = sum(1 for c in stricter["changes"] if c["then"] == 1.0)
    assert stricter["changed"] == passed_before > 0
    assert all(c["why"] == "refused by a stricter checker" for c in stricter["changes"])

    # `flywheel snapshot rebuild` writes each snapshot again from the archive alone: same sha256.
    for snapshot_id in [s["snapshot_id"] for s in report["snapshots"]]:
        rebuilt = subprocess.run([sys.executable, "-m", "services.cli.main", "snapshot", "rebuild",
                                  snapshot_id, "--json"], env=env, capture_output=True, text=True,
                                 timeout=WAIT_S, check=False)
        assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
        assert json.loads(rebuilt.stdout)["identical"] is True
    # `flywheel audit ID --from-archive` needs neither the checkpoint folder nor the snapshots:
    # the chain comes from checkpoint.saved events, the snapshot is rebuilt (same sha256 as trained on).
    snapshots_dir = Path(report["snapshots"][-1]["path"]).parent
    snapshots_dir.rename(snapshots_dir.with_name("snapshots-hidden"))
    try:
        alone = subprocess.run([sys.executable, "-m", "services.cli.main", "audit",
                                report["checkpoint"]["checkpoint_id"], "--from-archive", "--json"],
                               env=env, capture_output=True, text=True, timeout=WAIT_S, check=False)
    finally:
        snapshots_dir.with_name("snapshots-hidden").rename(snapshots_dir)
    assert alone.returncode == 0, alone.stdout + alone.stderr
    topics_only = json.loads(alone.stdout)
    assert topics_only["chain"] == report["chain"] and topics_only["rows"] == report["rows"]
    assert all(s["read_from"] == "rebuilt from the archive" and s["sha256_matches"]
               and s["sha256_recorded"] == t["sha256_recorded"]
               for s, t in zip(topics_only["snapshots"], report["snapshots"], strict=True))
    assert topics_only["slices"] == report["slices"] and topics_only["held_out_rows"] == []
    # … and `rescore --write-snapshot` writes the newest one without an episode that fails today.
    from services.cli.rescore_cmd import write_corrected
    newest = report["snapshots"][-1]["snapshot_id"]
    rows = pq.read_table(Path(report["snapshots"][-1]["path"]) / "data.parquet").to_pylist()
    one = next(c for c in stricter["changes"] if c["episode_id"] == rows[0]["episode_id"])
    corrects, fixed = write_corrected({"changes": [one]}, data_dir / "archive", data_dir / "blobs",
                                      Path(report["snapshots"][-1]["path"]).parent, newest)
    assert corrects == newest and fixed is not None and fixed.snapshot_id != newest
    left = {r["episode_id"] for r in pq.read_table(Path(fixed.path) / "data.parquet").to_pylist()}
    assert one["episode_id"] not in left and left

    # Every analyst query the README gives runs on this run's data dir (from the folder above it,
    # as the README's `var/…` paths assume).
    from tests.test_readme import readme_queries
    for query in readme_queries():
        ran = subprocess.run([sys.executable, "-m", "services.cli.main", "sql", query], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=WAIT_S, check=False)
        assert ran.returncode == 0, (query, ran.stdout + ran.stderr)

    # The run wrote its offline report, with both generations' checkpoints in it.
    page = (data_dir / "report.html").read_text()
    for saved in con.execute("SELECT json_extract_string(payload, '$.checkpoint_id') FROM read_parquet(?) "
                             "WHERE type = 'checkpoint.saved'", [files]).fetchall():
        assert saved[0] in page
    assert f"details: the report {data_dir / 'report.html'}" in output
