"""The data flywheel inside `flywheel run`: starts the generator, rollout, verifier and
curator as their own processes, watches the topics for progress, and knows when `--examples N`
approved examples are in a snapshot.

`run_cmd` calls `DataLoop.start()` after the topics exist, adds `DataLoop.status()` to its live
line, stops when `DataLoop.done` (or on Ctrl-C), then `DataLoop.stop()` and prints
`DataLoop.summary_rows()`. Every service logs to `<data dir>/logs/<service>.log`.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from schemas.reviews import ReviewDecided, ReviewRequested
from schemas.topics import TOPICS
from schemas.training import DatasetSnapshotted
from schemas.verdicts import VerdictIssued
from services.orphan_guard import PARENT_ENV
from streams.consumer import TypedBatchConsumer
from streams.lifecycle import Running

__all__ = ["DEFAULT_EXAMPLES", "SERVICES", "DataLoop", "LoopProgress"]

logger = logging.getLogger(__name__)

#: Approved examples `flywheel run` waits for by default: the issue's 500, which a 2-core
#: machine reaches in well under its 3-minute aim with the oracle policy.
DEFAULT_EXAMPLES = 500
#: The services, in start order (consumers first, so the first tasks find them ready).
SERVICES = ("verifier", "curator", "rollout", "generator")
#: The services that make new work; `quiesce` stops them once the target is reached.
QUIESCED = ("generator", "rollout")
#: SIGTERM, then this long for a clean exit, then SIGKILL.
STOP_GRACE_S = 20.0
#: The curator's review requests end "— N rows" (what admitting them adds to a snapshot).
ROWS_IN_SUMMARY = re.compile(r"— (\d+) rows$")
#: After the snapshot, how long the run waits for the archiver to archive its event.
ARCHIVE_GRACE_S = 10.0
#: The events/s figure is a moving window this long.
RATE_WINDOW_S = 5.0


@dataclass(frozen=True)
class EndedEpisode:
    """What the progress line needs of an `episode.ended`: its id, outcome and step count."""

    episode_id: str
    outcome: str
    steps: int


def _episode_ended(value: bytes | None) -> EndedEpisode | None:
    """An `episode.ended` record's id, outcome and step count read as plain JSON (None for an
    `episode.started` or anything unreadable: the services dead-letter bad events, the count
    only skips them)."""
    try:
        data = json.loads(value or b"")
        if data.get("type") != "episode.ended":
            return None
        return EndedEpisode(str(data["episode_id"]), str(data["outcome"]), len(data["steps"]))
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


@dataclass
class LoopProgress:
    """What the monitor has seen on the topics since it started."""

    episodes: int = 0
    verdicts: int = 0
    passed: int = 0
    environment_faults: int = 0
    requested: set[str] = field(default_factory=set)
    decided: set[str] = field(default_factory=set)
    steps: dict[str, int] = field(default_factory=dict)
    admitted: set[str] = field(default_factory=set)
    snapshots: list[DatasetSnapshotted] = field(default_factory=list)
    events: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    recent: deque[tuple[float, int]] = field(default_factory=deque)
    first_episode_at: float | None = None
    done_at: float | None = None

    #: rows per episode as the curator's review request states them (corrections differ)
    rows: dict[str, int] = field(default_factory=dict)

    @property
    def examples(self) -> int:
        return sum(self.rows.get(e, self.steps.get(e, 0)) for e in self.admitted)

    @property
    def pass_rate(self) -> float:
        return self.passed / self.verdicts if self.verdicts else 0.0

    @property
    def review_queue(self) -> int:
        return len(self.requested - self.decided)

    def rate(self, now: float) -> float:
        while self.recent and now - self.recent[0][0] > RATE_WINDOW_S:
            self.recent.popleft()
        if len(self.recent) < 2:
            return 0.0
        span = self.recent[-1][0] - self.recent[0][0]
        return sum(n for _, n in list(self.recent)[1:]) / span if span > 0 else 0.0


class DataLoop(Running):
    """The four data services as child processes plus a progress monitor."""

    def __init__(self, bootstrap: str, data_dir: Path, examples: int, *, policy: str = "oracle",
                 env: dict[str, str] | None = None) -> None:
        self.bootstrap = bootstrap
        self.data_dir = Path(data_dir)
        self.examples = examples
        self.policy = policy
        self.log_dir = self.data_dir / "logs"
        # The gate's waiting count, when the run serves a gate (`flywheel run` sets it).
        self.review_waiting: Callable[[], int] | None = None
        self.progress = LoopProgress()
        self._env = env or {}
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._stop = threading.Event()
        self._monitor: threading.Thread | None = None
        self.started_at = time.monotonic()
        self.errors: list[str] = []
        self.died: list[str] = []  # services that exited before stop() was called
        self.restarts: Counter[str] = Counter()  # respawns per service
        self._quiesced = False

    # ---- lifecycle ---------------------------------------------------------------------------
    def start(self) -> Self:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self._monitor = threading.Thread(target=self._watch, name="flywheel-loop-monitor",
                                         daemon=True)
        self._monitor.start()
        for name in SERVICES:
            self.spawn(name)
        self.started_at = time.monotonic()
        return self

    def child_env(self) -> dict[str, str]:
        """The environment every service process gets (the same on a restart). Where the rollout
        plays the oracle, its episodes are the oracle's check of each task, so the generator does
        not play the oracle again (unless the environment says otherwise): the simulator runs
        once per episode."""
        own_check = {} if self.policy != "oracle" else {"FLYWHEEL_GENERATOR_ORACLE_CHECK": "false"}
        return {**own_check, **os.environ, **self._env, "KAFKA_BOOTSTRAP_SERVERS": self.bootstrap,
                "FLYWHEEL_DATA_DIR": str(self.data_dir),
                "FLYWHEEL_CURATOR_SNAPSHOT_EXAMPLES": str(max(1, self.examples)),
                "FLYWHEEL_ROLLOUT_POLICY": self.policy,
                "PYTHONPATH": os.pathsep.join(p for p in (str(Path.cwd()),
                                                          os.environ.get("PYTHONPATH", "")) if p)}

    def spawn(self, name: str) -> None:
        """(Re)starts one service process."""
        env = {**self.child_env(), PARENT_ENV: str(os.getpid())}
        log = (self.log_dir / f"{name}.log").open("ab")
        # Through the orphan guard: the service stops itself if this process dies without stopping it.
        self._procs[name] = subprocess.Popen([sys.executable, "-m", "services.orphan_guard", f"services.{name}"],
                                             env=env, stdout=log, stderr=subprocess.STDOUT)
        log.close()

    def respawn_dead(self) -> list[str]:
        """Starts again every service whose process exited unexpectedly (not the ones
        `quiesce` stopped, and none once `stop` began); returns their names."""
        if self._stop.is_set():
            return []
        quiet = set(QUIESCED) if self._quiesced else set()
        again = [name for name, proc in self._procs.items()
                 if proc.poll() is not None and name not in quiet]
        for name in again:
            logger.warning("%s exited (code %s); starting it again", name,
                           self._procs[name].returncode)
            self.restarts[name] += 1
            self.spawn(name)
        return again

    def pid(self, name: str) -> int:
        return self._procs[name].pid

    def dead(self) -> list[str]:
        """Services whose process has exited, with the exit code."""
        return [f"{name} (exit {p.returncode})" for name, p in self._procs.items()
                if p.poll() is not None]

    @property
    def done(self) -> bool:
        """A snapshot of at least `examples` rows was written during this run."""
        return any(s.rows >= self.examples for s in self.progress.snapshots)

    def finished(self, archived_snapshots: int) -> bool:
        """Done, and the archive holds the snapshot events too (or ARCHIVE_GRACE_S passed), so
        the run's record includes the `dataset.snapshotted` that ended it."""
        if not self.done or self.progress.done_at is None:
            return False
        self.quiesce()
        return (archived_snapshots >= len(self.progress.snapshots)
                or time.monotonic() - self.progress.done_at > ARCHIVE_GRACE_S)

    def quiesce(self) -> None:
        """Stops making new work (generator, then rollout) once the target is reached; the
        verifier and curator go on until `stop`. Non-blocking, idempotent."""
        if self._quiesced:
            return
        self._quiesced = True
        self.died = self.dead()
        for name in QUIESCED:
            proc = self._procs.get(name)
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)

    def stop(self) -> None:
        if not self._quiesced:
            self.died = self.dead()
        self._stop.set()
        # The quiesced generator and rollout have had their SIGTERM and are stopping: a second
        # one can land after a faust worker removed its handler and kill it (exit -15, shown
        # as a failure), so they are only waited for.
        signalled = set(QUIESCED) if self._quiesced else set()
        for name, proc in self._procs.items():
            if proc.poll() is None and name not in signalled:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for name, proc in self._procs.items():
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                logger.warning("%s did not stop within %.0f s; killing it", name, STOP_GRACE_S)
                proc.kill()
                proc.wait()
        if self._monitor is not None:
            self._monitor.join(10)

    # ---- the monitor -------------------------------------------------------------------------
    def _watch(self) -> None:
        """Folds what the services publish into `progress`. Episodes are the loop's largest
        events (whole trajectories) and the count needs three of their fields, so they are read
        as plain JSON (`_episode_ended`); the small events are decoded typed. Tasks are not
        read: the episodes and verdicts say all the progress line shows."""
        topics = [TOPICS[n] for n in ("flywheel.verdicts", "flywheel.reviews", "flywheel.datasets")]
        started = time.time()
        try:
            with TypedBatchConsumer(self.bootstrap, topics, f"flywheel-run-{uuid.uuid4().hex[:8]}",
                                    client_id="flywheel-run-monitor",
                                    raw_topics=[TOPICS["flywheel.episodes"].name]) as consumer:
                while not self._stop.is_set():
                    batch = consumer.poll_batch(200)
                    self._fold([r.event if r.event is not None else _episode_ended(r.value)
                                for r in batch], started)
        except Exception as error:  # noqa: BLE001 - progress is optional; the run goes on
            logger.warning("the progress monitor stopped: %s", error)
            self.errors.append(f"progress monitor: {error}")

    def _fold(self, events: list, started: float) -> None:
        p = self.progress
        p.events += len(events)
        p.recent.append((time.monotonic(), len(events)))
        for event in events:
            if isinstance(event, EndedEpisode):
                if p.first_episode_at is None:
                    p.first_episode_at = time.monotonic()
                if event.episode_id not in p.steps:
                    p.episodes += 1
                    p.outcomes[event.outcome] += 1
                p.steps[event.episode_id] = event.steps
            elif isinstance(event, VerdictIssued):
                p.verdicts += 1
                p.passed += event.passed
                p.environment_faults += event.environment_fault
            elif isinstance(event, ReviewRequested):
                p.requested.add(event.review_id)
                rows = ROWS_IN_SUMMARY.search(event.summary)
                if rows is not None:  # the curator says how many rows it would add
                    for subject in event.subject_ids:
                        p.rows[subject] = int(rows.group(1))
            elif isinstance(event, ReviewDecided):
                p.decided.add(event.review_id)
                if event.decision == "approved":
                    p.admitted.update(event.approved_ids)
            elif isinstance(event, DatasetSnapshotted) and \
                    event.occurred_at.timestamp() >= started - 1:
                p.snapshots.append(event)
                if event.rows >= self.examples and p.done_at is None:
                    p.done_at = time.monotonic()

    # ---- reporting ---------------------------------------------------------------------------
    def status(self, now: float | None = None) -> str:
        now = now if now is not None else time.monotonic()
        p = self.progress
        text = (f"loop: {p.rate(now):,.0f} ev/s | episodes {p.episodes:,} | pass rate "
                f"{p.pass_rate:.0%} | review queue {self.waiting_for_review():,} | examples "
                f"{min(p.examples, 10**9):,}/{self.examples:,}")
        finished = [name for name, p in self._procs.items() if p.poll() == 0]
        failed = [f"{name} (exit {p.returncode})" for name, p in self._procs.items()
                  if p.poll() not in (None, 0)]
        if finished:  # a service that exits 0 has done its part (the queue is full, say)
            text += f" | done: {', '.join(finished)}"
        if failed:
            text += f" | FAILED: {', '.join(failed)}"
        return text

    def waiting_for_review(self) -> int:
        """Items waiting for a person: the gate's own count when the run serves one (so the
        terminal and the gate's page say the same), else what the review events imply."""
        if self.review_waiting is not None:
            try:
                return self.review_waiting()
            except Exception:  # a status line never ends the run
                logger.debug("the gate's count is not available", exc_info=True)
        return self.progress.review_queue

    def summary_rows(self) -> list[tuple[str, str]]:
        p = self.progress
        elapsed = max(1e-9, time.monotonic() - self.started_at)
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(p.outcomes.items()))
        rows = [("episodes (by outcome)", f"{p.episodes:,} ({outcomes})"),
                ("verdicts / passed", f"{p.verdicts:,} / {p.passed:,} ({p.pass_rate:.0%})"),
                ("environment faults", f"{p.environment_faults:,}"),
                ("reviews requested / decided", f"{len(p.requested):,} / {len(p.decided):,}"),
                ("approved examples", f"{p.examples:,} (target {self.examples:,})"),
                ("episodes/s, examples/s",
                 f"{p.episodes / elapsed:,.1f}, {p.examples / elapsed:,.1f}")]
        for snap in p.snapshots:
            dropped = ", ".join(f"{k.split(':', 1)[1]} {v}" for k, v in sorted(snap.counts.items())
                                if k.startswith("dropped:"))
            admitted_by = snap.admission_policy.split(" (")[0]
            rows.append(("snapshot", (f"{snap.path}/data.parquet ({snap.rows:,} rows; dropped: "
                                      f"{dropped or 'none'}; admitted by {admitted_by})")))
        for error in self.errors + [f"service stopped early: {d}" for d in self.died]:
            rows.append(("[red]problem[/]", error))
        return rows
