"""`flywheel snapshot rebuild ID`: write a snapshot again from the event archive and check it is
byte for byte the one the curator wrote.

The rebuild reads only the archive (the snapshot's `dataset.snapshotted` event, the recipe in
its manifest, and every task, episode, verdict, decision and failure trace the recipe names) and
the blob store, writes the files under `--out` (default `<data dir>/rebuilt/`), and compares
each file's sha256 with the one the archived event recorded. Exit status 0 when every file is
identical, 1 otherwise (the differing files are listed) or when an input is missing (one
sentence names it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from services.cli.archive_cmd import ArchiveOption, fail

__all__ = ["archived_inputs", "register"]

console = Console()
snapshot_app = typer.Typer(help="Rebuild and check training-set snapshots.", no_args_is_help=True)


def archived_inputs(archive_root: Path) -> Any:
    """The archive's input events for a rebuild (services.curator.rebuild.load_inputs);
    ArchiveMissing (a FileNotFoundError) when there is no archive."""
    from services.archiver.store import ArchiveStore
    from services.curator.rebuild import load_inputs

    store = ArchiveStore(archive_root)
    store.require()
    return load_inputs(store.read(columns=["topic", "partition", "offset", "event_id", "type", "payload"]).to_pylist())


@snapshot_app.command("rebuild")
def rebuild(
    snapshot_id: Annotated[str, typer.Argument(help="The snapshot's id (its folder name).")],
    out: Annotated[Path | None, typer.Option(
        help="Where the rebuilt snapshot is written (default: <data dir>/rebuilt).")] = None,
    archive: ArchiveOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
) -> None:
    """Rebuild a snapshot from the event archive alone and compare its sha256 with the original."""
    from services.archiver.settings import load_archiver_settings
    from services.curator.rebuild import RebuildError, rebuild_snapshot
    from services.dataflow.tasks import blob_dir
    from streams.settings import load_bus_settings

    try:
        data_dir = Path(load_bus_settings().data_dir)
        archive_root = archive or load_archiver_settings().resolved_archive_dir(data_dir)
        result = rebuild_snapshot(snapshot_id, archived_inputs(archive_root), blob_dir(data_dir),
                                  out or data_dir / "rebuilt")
    except (RebuildError, ValueError, FileNotFoundError) as error:
        fail(str(error))
    if as_json:
        typer.echo(json.dumps({"snapshot_id": result.snapshot_id, "folder": str(result.folder),
                               "identical": result.identical, "notes": result.notes,
                               "files": {k: {"archived": a, "rebuilt": b} for k, (a, b) in result.files.items()}},
                              indent=2))
    else:
        for note in result.notes:
            console.print(f"note: {note}", highlight=False)
        for name, (then, now) in result.files.items():
            mark = "[green]identical[/]" if then == now else f"[red]differs[/] (archived {str(then)[:12]})"
            console.print(f"{name}: {now[:12]}… {mark}", highlight=False)
        verdict = ("byte for byte the snapshot the curator wrote" if result.identical
                   else "NOT the snapshot the curator wrote")
        console.print(f"snapshot {result.snapshot_id} rebuilt from the archive at {result.folder}: {verdict}",
                      highlight=False)
    if not result.identical:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(snapshot_app, name="snapshot")
