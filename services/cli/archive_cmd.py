"""`flywheel archive ...`: re-publish the event archive into a broker, and show what it holds."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from schemas.topics import TOPICS
from services.archiver.replay import ReplayError, ReplayReport, ensure_replay_topics, replay_archive
from services.archiver.settings import resolve_archive_dir
from services.archiver.store import ArchiveMissing, ArchiveStore
from streams.admin import AdminError
from streams.broker import BrokerError, LocalBroker, kafka_answers
from streams.settings import load_bus_settings

__all__ = ["ArchiveOption", "fail", "open_store", "register", "replay_table", "replay_with_progress"]

logger = logging.getLogger(__name__)

archive_app = typer.Typer(help="Re-publish and inspect the Parquet event archive.",
                          no_args_is_help=True)
console = Console()
err_console = Console(stderr=True)

#: The --archive option every archive command shares.
ArchiveOption = Annotated[Path | None, typer.Option(
    "--archive", help="Archive folder (default: FLYWHEEL_ARCHIVER_ARCHIVE_DIR or "
                      "<FLYWHEEL_DATA_DIR>/archive).",
)]


def fail(message: str) -> NoReturn:
    """Prints one sentence for people on stderr and exits with status 1 (no traceback)."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(1)


def open_store(archive: Path | None, *, must_exist: bool = True) -> ArchiveStore:
    """The archive store at `archive` (or the configured one); exits with one sentence on error."""
    try:
        store = ArchiveStore(resolve_archive_dir(archive))
        if must_exist:
            store.require()
    except (ValueError, ArchiveMissing) as error:
        fail(str(error))
    return store


def replay_with_progress(store: ArchiveStore, bootstrap: str,
                         topics: list[str] | None = None, *,
                         archiver_group: str | None = None) -> ReplayReport:
    """Creates the target topics, replays with a rich progress bar per topic, returns counts."""
    ensure_replay_topics(bootstrap, store, topics)
    with Progress(TextColumn("replay {task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=False) as progress:
        tasks: dict[str, int] = {}

        def on_progress(topic: str, done: int, total: int) -> None:
            if topic not in tasks:
                tasks[topic] = progress.add_task(topic, total=total)
            progress.update(tasks[topic], completed=done)

        return replay_archive(store, bootstrap, topics, on_progress=on_progress,
                              archiver_group=archiver_group)


def replay_table(report: ReplayReport) -> Table:
    table = Table("topic", "records re-published", title="archive replay")
    for topic, count in sorted(report.counts.items()):
        table.add_row(topic, f"{count:,}")
    table.add_row("[bold]total[/]", f"[bold]{report.total:,}[/]")
    return table


def _running_bootstrap() -> str:
    """KAFKA_BOOTSTRAP_SERVERS, else the running local broker; never starts one (a broker
    started just for the replay would lose it again on exit)."""
    try:
        settings = load_bus_settings()
    except ValueError as error:
        fail(str(error))
    configured = settings.bootstrap_or_none()
    if configured is not None:
        if not kafka_answers(configured):
            fail(f"Kafka at {configured} does not answer; check KAFKA_BOOTSTRAP_SERVERS")
        return configured
    broker = LocalBroker.recorded(settings.data_dir)
    if broker is None:
        fail("no broker is running; start one with `flywheel broker start` (or just run "
             "`flywheel run`, which replays the archive itself) or set KAFKA_BOOTSTRAP_SERVERS")
    return broker.bootstrap


@archive_app.command("replay")
def replay(
    archive: ArchiveOption = None,
    topic: Annotated[list[str] | None, typer.Option(
        "--topic", help="Replay only this topic (repeatable); default: every archived one.",
    )] = None,
) -> None:
    """Re-publish the archive into the running broker, byte for byte and in offset order."""
    store = open_store(archive)
    bootstrap = _running_bootstrap()
    try:
        report = replay_with_progress(store, bootstrap, topic or None)
    except (ReplayError, AdminError, BrokerError) as error:
        fail(str(error))
    console.print(replay_table(report))


@archive_app.command("stats")
def stats(archive: ArchiveOption = None) -> None:
    """Show files, events and bytes per archived topic."""
    store = open_store(archive)
    table = Table("topic", "registered", "files", "events", "MiB", title=f"archive {store.root}")
    files = rows = size = 0
    for entry in store.stats():
        base = entry.topic.removesuffix(".dlq")
        known = "yes" if base in TOPICS else "no"
        table.add_row(entry.topic, known, f"{entry.files:,}", f"{entry.rows:,}",
                      f"{entry.bytes / 2**20:,.2f}")
        files, rows, size = files + entry.files, rows + entry.rows, size + entry.bytes
    table.add_row("[bold]total[/]", "", f"[bold]{files:,}[/]", f"[bold]{rows:,}[/]",
                  f"[bold]{size / 2**20:,.2f}[/]")
    console.print(table)


def register(app: typer.Typer) -> None:
    app.add_typer(archive_app, name="archive")
