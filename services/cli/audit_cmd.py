"""`flywheel audit CHECKPOINT`: what stands behind a checkpoint, and whether it still holds.

From the checkpoint's `flywheel_checkpoint.json` and its parents (a GRPO generation's parent is
the SFT checkpoint, and so on down to the base model) it collects every snapshot trained on,
finds each under the data dir's snapshots and checks its sha256 against the one recorded at
training time. Per family, tier and template it counts the rows and episodes and lists the
policies, harness and verifier versions and how each row was admitted (a signed review
decision or the admission policy). It checks that every row's lineage events (task, episode,
verdict, decision, and a correction's failure trace) are in the event archive at the
topic/partition/offset the row names, with the same event id, and that no row is a dev or
test instance. `--json` prints the whole report; the exit status is 1 when a check fails.

`--from-archive` audits from the topics alone (their Parquet archive and the blob store): the
checkpoint may then be named by its id, its chain comes from the archived `checkpoint.saved`
events (each names the checkpoint it was trained from), and every snapshot is rebuilt from
the archived events (`services.curator.rebuild`) instead of read from the snapshots folder; its
sha256 is checked against the one the checkpoint (or else the archived snapshot event) recorded.
A snapshot folder that is gone is rebuilt the same way.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Annotated, Any

import duckdb
import typer
from rich.console import Console
from rich.table import Table

from services.cli.archive_cmd import ArchiveOption, fail

__all__ = ["audit_checkpoint", "register"]

console = Console()
LINEAGE = ("task", "episode", "verdict", "decision", "failure")
#: A task id names its split: `<template>-<split>-<index>-<seed>`.
_SPLIT_IN_ID = re.compile(r"-(train|dev|test)-\d{5}-[0-9a-f]{8}$")


def _chain(checkpoint: Path) -> list[dict[str, Any]]:
    """The checkpoint's metadata, then its parents' while they are checkpoints."""
    from trainer.sft import CHECKPOINT_FILE

    chain, seen, here = [], set(), checkpoint
    while (here / CHECKPOINT_FILE).is_file() and here.resolve() not in seen:
        seen.add(here.resolve())
        meta = json.loads((here / CHECKPOINT_FILE).read_text())
        chain.append({**meta, "path": str(here)})
        here = Path(str(meta.get("parent") or ""))
    if not chain:
        raise FileNotFoundError(f"{checkpoint} has no {CHECKPOINT_FILE}; pass a checkpoint folder "
                                f"(e.g. <data dir>/checkpoints/run-…/gen1)")
    return chain


def _chain_from_archive(checkpoint: str, archive_files: list[Path]) -> list[dict[str, Any]]:
    """The chain from the archived `checkpoint.saved` events: `checkpoint` (an id, or a folder
    whose name or metadata gives it), then its base while that is an archived checkpoint."""
    from services.archiver.query import payloads
    from trainer.sft import CHECKPOINT_FILE

    saved = {p["checkpoint_id"]: p for _, p in payloads(archive_files, ("checkpoint.saved",))}
    folder = Path(checkpoint)
    here = (json.loads((folder / CHECKPOINT_FILE).read_text()).get("checkpoint_id")
            if (folder / CHECKPOINT_FILE).is_file() else checkpoint)
    chain: list[dict[str, Any]] = []
    while here in saved and all(m["checkpoint_id"] != here for m in chain):
        chain.append({**saved[here], "path": None})
        here = saved[here].get("parent_checkpoint_id") or saved[here].get("base_model")
    if not chain:
        raise FileNotFoundError(f"no checkpoint.saved event for {checkpoint} in the archive; pass a "
                                "checkpoint id the run printed (or its folder)")
    return chain


def _rebuilt(snapshot_id: str, inputs: Any, blob_root: Path, out: Path) -> tuple[Path, str | None]:
    """Snapshot `snapshot_id` rebuilt from the archived `inputs` under `out`, and the data
    sha256 its archived event recorded."""
    from services.curator.rebuild import rebuild_snapshot

    result = rebuild_snapshot(snapshot_id, inputs, blob_root, out)
    return result.folder, result.files["data.parquet"][0]


def _snapshot_dirs(snapshots_root: Path) -> dict[str, Path]:
    found = {}
    for manifest in snapshots_root.glob("*/manifest.json"):
        try:
            found[json.loads(manifest.read_text()).get("snapshot_id", manifest.parent.name)] = manifest.parent
        except (OSError, json.JSONDecodeError):
            continue
    return found


def _held_out(rows: list[dict[str, Any]]) -> list[str]:
    """Rows that are not train instances: labelled otherwise, named otherwise, or from a template
    held out for test."""
    from devices.suite.registry import UnknownTemplate, get_template

    bad = []
    for row in rows:
        task_id, template = str(row.get("task_id") or ""), str(row.get("template") or "")
        named = _SPLIT_IN_ID.search(task_id)
        split = row.get("split") or (named.group(1) if named else None)
        if split != "train" or (named is not None and named.group(1) != "train"):
            bad.append(f"{row['example_id']} ({task_id}) is a {split} instance")
            continue
        names = template.removeprefix("composed:").split("+")
        try:
            if any("train" not in get_template(name).splits() for name in names):
                bad.append(f"{row['example_id']}: template {template} is held out for test")
        except UnknownTemplate:
            continue  # a template this checkout does not know: the label and name checks stand
    return bad


def _archived(rows: list[dict[str, Any]], archive_files: list[Path]) -> tuple[int, int, list[str]]:
    """(events named, events found in the archive at their place with their id, first missing)."""
    wanted = {(row[f"{w}_topic"], row[f"{w}_partition"], row[f"{w}_offset"], row[f"{w}_event_id"])
              for row in rows for w in LINEAGE
              if row.get(f"{w}_topic") is not None and row.get(f"{w}_offset") is not None}
    if not wanted:
        return 0, 0, []
    if not archive_files:
        return len(wanted), 0, [f"{t}[{p}]@{o}" for t, p, o, _ in sorted(wanted)[:5]]
    con = duckdb.connect()
    con.execute("CREATE TEMP TABLE wanted(topic VARCHAR, part INTEGER, off BIGINT, event_id VARCHAR)")
    con.executemany("INSERT INTO wanted VALUES (?, ?, ?, ?)", sorted(wanted))
    missing = con.execute(
        "SELECT w.topic, w.part, w.off FROM wanted w LEFT JOIN "
        "(SELECT topic, \"partition\", \"offset\", event_id FROM read_parquet(?)) a "
        "ON a.topic = w.topic AND a.\"partition\" = w.part AND a.\"offset\" = w.off AND a.event_id = w.event_id "
        "WHERE a.event_id IS NULL ORDER BY 1, 2, 3", [[str(f) for f in archive_files]]).fetchall()
    return len(wanted), len(wanted) - len(missing), [f"{t}[{p}]@{o}" for t, p, o in missing[:5]]


def audit_checkpoint(checkpoint: Path, snapshots_root: Path, archive_root: Path | None, *,
                     from_archive: bool = False, blob_root: Path | None = None) -> dict[str, Any]:
    """The audit report (see the module docstring); `ok` is False when a check failed."""
    import tempfile

    from services.archiver.store import ArchiveStore

    archive_files = ArchiveStore(archive_root).files() if archive_root is not None else []
    if from_archive and not archive_files:
        raise FileNotFoundError(f"--from-archive needs the event archive, and {archive_root} holds none")
    chain = _chain_from_archive(str(checkpoint), archive_files) if from_archive else _chain(checkpoint)
    with tempfile.TemporaryDirectory() as rebuilt:
        return _audit(chain, {} if from_archive else _snapshot_dirs(snapshots_root), archive_root,
                      archive_files, blob_root, Path(rebuilt))


def _audit(chain: list[dict[str, Any]], known: dict[str, Path], archive_root: Path | None,
           archive_files: list[Path], blob_root: Path | None, rebuilt: Path) -> dict[str, Any]:
    import pyarrow.parquet as pq

    from services.cli.snapshot_cmd import archived_inputs
    from services.curator.rebuild import RebuildError
    from trainer.data import read_snapshot

    inputs: Any = None  # the archive's input events, read once when a snapshot must be rebuilt
    snapshots, rows = [], []
    for meta in chain:
        snapshot_id = meta.get("snapshot_id")
        if not snapshot_id or snapshot_id == "online" or any(s["snapshot_id"] == snapshot_id for s in snapshots):
            continue
        folder = known.get(snapshot_id)
        recorded, how = meta.get("snapshot_sha256"), "snapshots folder"
        if folder is None and archive_files and blob_root is not None:
            try:
                inputs = inputs if inputs is not None else archived_inputs(archive_root)  # type: ignore[arg-type]
                folder, archived_sha = _rebuilt(snapshot_id, inputs, blob_root, rebuilt)
                recorded, how = recorded or archived_sha, "rebuilt from the archive"
            except RebuildError as error:
                how = f"not rebuilt: {error}"
        entry: dict[str, Any] = {"snapshot_id": snapshot_id, "trained_by": meta.get("checkpoint_id"),
                                 "sha256_recorded": recorded, "read_from": how,
                                 "path": str(folder) if folder and how == "snapshots folder" else None}
        if folder is None:
            entry.update(found=False, sha256_now=None, sha256_matches=False)
        else:
            snapshot = read_snapshot(folder)
            entry.update(found=True, sha256_now=snapshot.sha256,
                         sha256_matches=snapshot.sha256 == meta.get("snapshot_sha256"))
            rows += pq.read_table(folder / "data.parquet").to_pylist()
        snapshots.append(entry)
    slices: dict[tuple[str, str, str], dict[str, Any]] = defaultdict(lambda: {
        "rows": 0, "episodes": set(), "policies": set(), "harness": set(), "verifiers": set(),
        "admitted_by": set(), "reviewed_rows": 0})
    for row in rows:
        cell = slices[(str(row.get("family")), str(row.get("tier")), str(row.get("template")))]
        cell["rows"] += 1
        cell["episodes"].add(row.get("episode_id"))
        cell["policies"].add(row.get("policy"))
        cell["harness"].add(row.get("harness"))
        cell["verifiers"].add(row.get("verifier"))
        cell["admitted_by"].add(row.get("admission_policy") or ("review" if row.get("review_decision_id") else None))
        cell["reviewed_rows"] += bool(row.get("review_decision_id"))
    named, found, missing = _archived(rows, archive_files)
    held_out = _held_out(rows)
    report = {
        "checkpoint": {k: chain[0].get(k) for k in ("checkpoint_id", "stage", "step", "run_id", "base_model", "path")},
        "chain": [m.get("checkpoint_id") for m in chain],
        "base_model": chain[-1].get("base_model"),
        "snapshots": snapshots,
        "rows": len(rows),
        "slices": [{"family": f, "tier": t, "template": name, "rows": c["rows"], "episodes": len(c["episodes"]),
                    "policies": sorted(map(str, c["policies"])), "harness": sorted(map(str, c["harness"])),
                    "verifiers": sorted(map(str, c["verifiers"])), "admitted_by": sorted(map(str, c["admitted_by"])),
                    "reviewed_rows": c["reviewed_rows"]} for (f, t, name), c in sorted(slices.items())],
        "lineage": {"events_named": named, "found_in_archive": found, "missing_first": missing,
                    "archive": str(archive_root) if archive_root is not None else None},
        "held_out_rows": held_out,
    }
    report["ok"] = (all(s["sha256_matches"] for s in snapshots) and not held_out
                    and (named == found or not archive_files))
    return report


def audit(
    checkpoint: Annotated[Path, typer.Argument(
        help="A checkpoint folder (with flywheel_checkpoint.json), or with --from-archive its id.")],
    snapshots: Annotated[Path | None, typer.Option(
        help="Where the snapshots are (default: the data dir's snapshots/).")] = None,
    archive: ArchiveOption = None,
    from_archive: Annotated[bool, typer.Option(
        "--from-archive", help="Audit from the archived topics alone: the chain from checkpoint.saved events "
                               "(CHECKPOINT may be an id), every snapshot rebuilt from the archive.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """What stands behind a checkpoint: base model, snapshots (sha256 checked), rows per slice
    with their versions and admission, the archived events behind them, no dev or test rows."""
    from services.archiver.settings import load_archiver_settings
    from services.curator.settings import load_curator_settings
    from services.dataflow.tasks import blob_dir
    from streams.settings import load_bus_settings

    try:
        data_dir = load_bus_settings().data_dir
        snapshots_root = snapshots or load_curator_settings().resolved_snapshot_dir(Path(data_dir))
        archive_root = archive or load_archiver_settings().resolved_archive_dir(Path(data_dir))
        report = audit_checkpoint(checkpoint, snapshots_root, archive_root, from_archive=from_archive,
                                  blob_root=blob_dir(Path(data_dir)))
    except (ValueError, FileNotFoundError) as error:
        fail(str(error))
    if as_json:
        typer.echo(json.dumps(report, indent=2, default=str))
    else:
        _print(report)
    if not report["ok"]:
        raise typer.Exit(1)


def _print(report: dict[str, Any]) -> None:
    c = report["checkpoint"]
    console.print(f"[bold]{c['checkpoint_id']}[/] ({c['stage']}, step {c['step']}, run {c['run_id']}); "
                  f"chain {' ← '.join(map(str, report['chain']))} ← base {report['base_model']}", highlight=False)
    for s in report["snapshots"]:
        state = ("[green]sha256 matches[/]" if s["sha256_matches"] else
                 "[red]not found[/]" if not s["found"] else "[red]sha256 differs from training time[/]")
        console.print(f"snapshot {s['snapshot_id']} ({s['path'] or s['read_from']}): {state}", highlight=False)
    table = Table("family", "tier", "template", "rows", "episodes", "policies", "harness", "verifier",
                  "admitted by", title=f"{report['rows']} rows behind the checkpoint")
    for row in report["slices"]:
        table.add_row(row["family"], row["tier"], row["template"], str(row["rows"]), str(row["episodes"]),
                      ", ".join(row["policies"]), ", ".join(h[:12] for h in row["harness"]),
                      ", ".join(row["verifiers"]), ", ".join(row["admitted_by"]))
    console.print(table)
    lineage = report["lineage"]
    console.print(f"archived events behind the rows: {lineage['found_in_archive']} of {lineage['events_named']} "
                  f"found at their topic/partition/offset in {lineage['archive']}"
                  + (f"; missing e.g. {', '.join(lineage['missing_first'])}" if lineage["missing_first"] else ""),
                  highlight=False)
    held = report["held_out_rows"]
    console.print("no dev or test instance reached training" if not held else
                  f"[red]{len(held)} rows are not train instances[/], e.g. {held[0]}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("audit")(audit)
