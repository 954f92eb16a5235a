"""`flywheel rescore [--since TIME]`: re-judge archived episodes with today's checkers.

For every `episode.ended` in the event archive (since `--since`), it loads the final state
the rollout stored in the blob store and scores it with the task's checker as this checkout
has it: no new rollout, no simulator. Each score is compared with the archived
`verdict.issued` and every verdict that would change is listed (episode, template, then →
now, and the first violation today's checker reports). A checker that tightened is how old
data that passed on a gap is found (e.g. the exact-intent rules that now refuse a reminder
naming both branches of a condition). `--checker-version V` re-judges only the episodes whose
archived verdict verifier version V issued. Exit status 0; `--json` prints the whole report.

`--write-snapshot` then writes a corrected snapshot: the newest archived snapshot's recipe (or
`--snapshot ID`'s) without every episode today's checker no longer passes, into the snapshots
folder under a new id, its manifest naming the snapshot it corrects and why each episode left
(`services.curator.rebuild.corrected_snapshot`). Train on it with `flywheel train sft --snapshot`.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from services.archiver.query import payloads
from services.cli.archive_cmd import ArchiveOption, fail

__all__ = ["register", "rescore_archive", "write_corrected"]

console = Console()


def _events(files: list[Path], kind: str, since: datetime | None) -> list[dict[str, Any]]:
    return [payload for _, payload in payloads(files, (kind,), since)]


def rescore_archive(archive_root: Path, blob_root: Path, since: datetime | None = None,
                    suite_seed: int = 0, checker_version: str | None = None) -> dict[str, Any]:
    """The re-judging report: counts, and every verdict that changes; with `checker_version`,
    only episodes whose archived verdict that verifier version issued (the others are counted
    as `other_version`)."""
    from devices.blobs import BlobNotFound, BlobStore
    from devices.suite.scoring import score_final_state
    from schemas.registry import validate_event
    from services.archiver.store import ArchiveStore
    from services.dataflow.tasks import instance_of

    files = ArchiveStore(archive_root).files()
    tasks = {e["task_id"]: validate_event(e) for e in _events(files, "task.proposed", None)}
    verdicts = {e["episode_id"]: e for e in _events(files, "verdict.issued", None)}
    blobs = BlobStore(blob_root)
    counts = {"episodes": 0, "rejudged": 0, "unchanged": 0, "changed": 0, "no_final_state": 0,
              "no_task": 0, "no_verdict": 0, "checker_failed": 0, "other_version": 0}
    changes: list[dict[str, Any]] = []
    for payload in _events(files, "episode.ended", since):
        counts["episodes"] += 1
        episode = validate_event(payload)
        task_event = tasks.get(episode.task_id)
        verdict = verdicts.get(episode.episode_id)
        if task_event is None:
            counts["no_task"] += 1
            continue
        if episode.final_state is None:
            counts["no_final_state"] += 1
            continue
        if verdict is None:
            counts["no_verdict"] += 1
            continue
        if checker_version is not None and verdict.get("verifier") != checker_version:
            counts["other_version"] += 1
            continue
        task = instance_of(task_event, suite_seed)
        try:
            result = score_final_state(task, json.loads(blobs.get(episode.final_state.sha256)))
        except BlobNotFound:
            counts["no_final_state"] += 1
            continue
        except Exception as error:  # noqa: BLE001 - a checker that cannot read old data is reported
            counts["checker_failed"] += 1
            changes.append({"episode_id": episode.episode_id, "template": task.template, "then": verdict["score"],
                            "now": None, "why": f"today's checker failed: {type(error).__name__}: {error}"})
            continue
        counts["rejudged"] += 1
        if abs(result.score - float(verdict["score"])) < 1e-9:
            counts["unchanged"] += 1
            continue
        counts["changed"] += 1
        why = (result.violations or [label for label, ok in result.subgoals if not ok] or ["all sub-goals now met"])[0]
        changes.append({"episode_id": episode.episode_id, "template": task.template,
                        "then": float(verdict["score"]), "now": result.score,
                        "verifier_then": verdict.get("verifier"), "why": why})
    return {"archive": str(archive_root), "since": since.isoformat() if since else None,
            "checker_version": checker_version, **counts,
            "changes": changes}


def write_corrected(report: dict[str, Any], archive_root: Path, blob_root: Path, snapshots_root: Path,
                    snapshot_id: str | None = None) -> tuple[str, Any]:
    """The corrected snapshot of `snapshot_id` (default: the newest archived one) without the
    episodes `report` found failing today: (the snapshot it corrects, its event or None when no
    episode of it changed)."""
    from services.cli.snapshot_cmd import archived_inputs
    from services.curator.rebuild import RebuildError, corrected_snapshot

    inputs = archived_inputs(archive_root)
    if snapshot_id is None:
        archived = list(inputs.snapshots)
        if not archived:
            raise RebuildError("the archive holds no dataset.snapshotted event, so there is no snapshot to correct")
        snapshot_id = archived[-1]
    drop = {c["episode_id"]: f"today's checker: {c['why']} (score then {c['then']:.2f}, now "
                             f"{'unreadable' if c['now'] is None else format(c['now'], '.2f')})"
            for c in report["changes"] if c["now"] is None or c["now"] < 1.0}
    return snapshot_id, corrected_snapshot(snapshot_id, inputs, blob_root, snapshots_root, drop)


def rescore(
    since: Annotated[datetime | None, typer.Option(
        help="Only episodes that ended at or after this time (ISO 8601, e.g. 2026-12-01T00:00:00+00:00).")] = None,
    archive: ArchiveOption = None,
    checker_version: Annotated[str | None, typer.Option(
        help="Only episodes whose archived verdict this verifier version issued (e.g. verifier/1.2.0).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    write_snapshot: Annotated[bool, typer.Option(
        "--write-snapshot", help="Also write a corrected snapshot without the episodes that fail today.")] = False,
    snapshot: Annotated[str | None, typer.Option(
        help="With --write-snapshot: the snapshot to correct (default: the newest archived one).")] = None,
) -> None:
    """Re-judge archived episodes with today's checkers from their stored final states and list
    every verdict that would change (no new rollouts); optionally write a corrected snapshot."""
    from services.archiver.settings import load_archiver_settings
    from services.curator.settings import load_curator_settings
    from services.dataflow.tasks import blob_dir
    from streams.settings import load_bus_settings

    try:
        data_dir = Path(load_bus_settings().data_dir)
        archive_root = archive or load_archiver_settings().resolved_archive_dir(data_dir)
        report = rescore_archive(archive_root, blob_dir(data_dir), since, checker_version=checker_version)
        if write_snapshot:
            corrects, event = write_corrected(report, archive_root, blob_dir(data_dir),
                                              load_curator_settings().resolved_snapshot_dir(data_dir), snapshot)
            report["corrected_snapshot"] = {"corrects": corrects, "snapshot_id": event and event.snapshot_id,
                                            "path": event and event.path, "rows": event and event.rows}
    except (ValueError, FileNotFoundError) as error:
        fail(str(error))
    if as_json:
        typer.echo(json.dumps(report, indent=2, default=str))
        return
    console.print(f"{report['episodes']:,} archived episodes: {report['rejudged']:,} re-judged, "
                  f"{report['unchanged']:,} unchanged, [bold]{report['changed']:,} changed[/]; "
                  f"{report['no_final_state']} without a final state, {report['no_task']} without their task, "
                  f"{report['no_verdict']} without a verdict, {report['checker_failed']} the checker could not read",
                  highlight=False)
    if report["changes"]:
        table = Table("episode", "template", "then", "now", "why", title="verdicts that change")
        for c in report["changes"][:50]:
            table.add_row(c["episode_id"], c["template"], f"{c['then']:.2f}",
                          "–" if c["now"] is None else f"{c['now']:.2f}", str(c["why"])[:100])
        console.print(table)
    fixed = report.get("corrected_snapshot")
    if fixed is not None:
        console.print(f"corrected snapshot of {fixed['corrects']}: {fixed['snapshot_id']} ({fixed['rows']} rows) at "
                      f"{fixed['path']}" if fixed["snapshot_id"] else
                      f"no episode of snapshot {fixed['corrects']} fails today: no corrected snapshot written",
                      highlight=False)


def register(app: typer.Typer) -> None:
    app.command("rescore")(rescore)
