"""`flywheel run`: the main job: broker, topics, archive replay, then the archiver until stopped."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from schemas.topics import TOPICS
from services.archiver.loop import Archiver, ArchiverStats
from services.archiver.query import view_name
from services.archiver.replay import ReplayError, ReplayReport
from services.archiver.service import StopFlag, build_archiver, loss_bound
from services.archiver.settings import ArchiverSettings, load_archiver_settings
from services.archiver.store import ArchiveStore
from services.cli.archive_cmd import ArchiveOption, fail, replay_table, replay_with_progress
from services.cli.loop_run import DEFAULT_EXAMPLES, DataLoop
from services.device_runner.fleet import SimFleet
from services.device_runner.settings import load_device_runner_settings
from streams.admin import AdminError, create_topics
from streams.broker import BrokerError, LocalBroker, ensure_broker
from streams.settings import load_bus_settings

__all__ = ["register", "status_line", "summary_table"]

logger = logging.getLogger(__name__)

console = Console()

#: The live status line is redrawn at most this often; more is noise and costs CPU.
STATUS_REFRESH_S = 0.25
#: Topics named in the status line (the busiest); the summary table lists them all.
STATUS_TOPICS = 4


def status_line(archiver: Archiver, settings: ArchiverSettings, now: float | None = None,
                fleet: SimFleet | None = None, loop: DataLoop | None = None) -> Text:
    """One line: events archived (busiest topics), rate, last flush, buffered, the loss bound."""
    now = now if now is not None else time.monotonic()
    stats = archiver.stats
    busiest = ", ".join(f"{view_name(t)} {n:,}"
                        for t, n in stats.archived.most_common(STATUS_TOPICS))
    flushed = ("never" if stats.last_flush_at is None
               else f"{now - stats.last_flush_at:.1f} s ago")
    line = Text()
    line.append("archiving ", style="bold")
    line.append(f"{stats.archived_total:,} events")
    if busiest:
        line.append(f" ({busiest})")
    line.append(f" | {stats.rate(now):,.0f} ev/s | last flush {flushed}"
                f" | buffered {archiver.buffered:,} | {stats.duplicates:,} duplicates skipped")
    if fleet is not None and fleet.count:
        line.append(f" | sim devices {fleet.serving}/{fleet.count}, {fleet.executed:,} actions")
    line.append(f" | {loss_bound(settings)}", style="dim")
    if loop is not None:
        line.append("\n" + loop.status(now))
    return line


def summary_table(stats: ArchiverStats, *, elapsed_s: float, reason: str | None,
                  replayed: ReplayReport | None, archive_dir: Path,
                  fleet: SimFleet | None = None, loop: DataLoop | None = None) -> Table:
    """What this run did: events archived per topic, and the totals."""
    table = Table("topic", "archived this run", title=f"flywheel run ({reason or 'stopped'})",
                  caption=f"archive: {archive_dir}")
    for topic, count in sorted(stats.archived.items()):
        table.add_row(topic, f"{count:,}")
    table.add_row("[bold]total[/]", f"[bold]{stats.archived_total:,}[/]")
    table.add_row("duplicates skipped", f"{stats.duplicates:,}")
    table.add_row("files written / flushes", f"{stats.files:,} / {stats.flushes:,}")
    if replayed is not None:
        table.add_row("re-published from the archive", f"{replayed.total:,}")
    if fleet is not None and fleet.count:
        table.add_row("sim device runners", f"{fleet.count} ({fleet.executed:,} actions, "
                                            f"{fleet.failed:,} device failures)")
        for error in fleet.errors:
            table.add_row("[red]runner stopped[/]", error)
    if loop is not None:
        for name, value in loop.summary_rows():
            table.add_row(name, value)
    table.add_row("ran for", f"{elapsed_s:,.1f} s")
    return table


def _run_archiver(archiver: Archiver, settings: ArchiverSettings, stop: StopFlag,
                  fleet: SimFleet, loop: DataLoop | None = None) -> None:
    last_draw = 0.0
    with Live(status_line(archiver, settings, fleet=fleet, loop=loop), console=console,
              refresh_per_second=4, transient=False) as live:

        def on_step(current: Archiver) -> None:
            nonlocal last_draw
            now = time.monotonic()
            if loop is not None and loop.done:
                stop.set(f"{loop.examples} examples")
            if now - last_draw >= STATUS_REFRESH_S:
                live.update(status_line(current, settings, now, fleet, loop))
                last_draw = now

        archiver.run(stop, on_step=on_step)
        live.update(status_line(archiver, settings, fleet=fleet, loop=loop))
    if not console.is_terminal:
        console.line()  # a non-terminal Live leaves its last line unterminated


def run(
    duration: Annotated[float | None, typer.Option(
        "--duration", min=0, help="Stop after this many seconds (tests, CI); default: run until "
                                  "Ctrl-C or SIGTERM.")] = None,
    archive: ArchiveOption = None,
    sim_devices: Annotated[int | None, typer.Option(
        "--sim-devices", min=0, help="Simulated phones to serve (sim-0 …); default "
                                     "FLYWHEEL_DEVICE_RUNNER_SIM_DEVICES.")] = None,
    examples: Annotated[int, typer.Option(
        "--examples", min=0, help="Run the data flywheel (generator, rollout, verifier, curator) "
                                  "until a snapshot of this many approved examples exists; 0 "
                                  "runs only the archive and device runners.")] = DEFAULT_EXAMPLES,
    policy: Annotated[str, typer.Option(
        "--policy", help="Rollout policy: oracle, random, noop or MODULE:CLASS.")] = "oracle",
) -> None:
    """Start the local broker (unless KAFKA_BOOTSTRAP_SERVERS is set), create the topics, replay
    the archive into a fresh local broker, then archive every topic and serve the simulated
    phones' device runners until stopped."""
    try:
        bus, settings = load_bus_settings(), load_archiver_settings()
        runners = load_device_runner_settings()
    except ValueError as error:
        fail(str(error))
    fleet: SimFleet | None = None
    loop: DataLoop | None = None
    archive_dir = archive if archive is not None else settings.resolved_archive_dir(bus.data_dir)
    store = ArchiveStore(archive_dir)
    started = time.monotonic()
    broker: LocalBroker | None = None
    replayed: ReplayReport | None = None
    stop = StopFlag(duration)
    try:
        bootstrap, broker = ensure_broker(bus)
        where = (f"fresh local broker on {bootstrap} (data in memory only)" if broker is not None
                 else f"Kafka at {bootstrap}")
        console.print(f"[bold]flywheel run[/]: {where}")
        create_topics(bootstrap, TOPICS.values(), with_dlq=True)
        if broker is not None and store.exists():
            console.print(f"re-publishing the archive at {archive_dir} into the fresh broker")
            replayed = replay_with_progress(store, bootstrap)
            console.print(replay_table(replayed))
        if broker is not None or bus.bootstrap_or_none() is None:
            console.print(f"the archive is the system of record: {loss_bound(settings)} "
                          f"(FLYWHEEL_ARCHIVER_FLUSH_INTERVAL_S / _FLUSH_MAX_EVENTS)")
        else:
            console.print("offsets are committed only after each flush, so after a crash the "
                          "archiver catches up from Kafka")
        archiver, source = build_archiver(bootstrap, settings, archive_dir)
        fleet = SimFleet(runners.sim_devices if sim_devices is None else sim_devices, bootstrap)
        if examples:
            loop = DataLoop(bootstrap, Path(bus.data_dir), examples, policy=policy)
            console.print(f"data flywheel: generator, rollout ({policy}), verifier and curator "
                          f"until {examples:,} approved examples are in a snapshot "
                          f"(logs in {loop.log_dir})")
        stop.install()
        try:
            with fleet:
                if loop is not None:
                    loop.start()
                try:
                    _run_archiver(archiver, settings, stop, fleet, loop)
                finally:
                    if loop is not None:
                        loop.stop()
        finally:
            stop.restore()
            source.close()
    except (BrokerError, AdminError, ReplayError, OSError) as error:
        fail(str(error))
    finally:
        if broker is not None:
            broker.stop()
            console.print(f"stopped the local broker on {broker.bootstrap}")
    console.print(summary_table(archiver.stats, elapsed_s=time.monotonic() - started,
                                reason=stop.reason, replayed=replayed, archive_dir=archive_dir,
                                fleet=fleet, loop=loop))


def register(app: typer.Typer) -> None:
    app.command("run")(run)
