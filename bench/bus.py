"""Bus throughput on the local broker: raw clients vs our typed producer/consumer, faust, archiver.

How to run:  .venv/bin/python bench/bus.py [--events 20000] [--reps 3] [--json out.json]
(uses KAFKA_BOOTSTRAP_SERVERS when set, else starts a private local broker). Every figure is
the median of --reps runs of 1 KiB events, shown as events/s and as a ratio to the fastest
raw client doing the same job in this run (producers to the faster of raw kafka-python and
aiokafka produce, consumers to the faster raw consume). Aims: typed producer >= 0.8, typed
batch consumer >= 0.7, faust pass-through >= 0.5, archiver >= 0.6 of that peer. Two faust
figures: a naive per-event agent (faust's own topic send), and the services' shell
(services.dataflow.agent.serve: batches, the event store, the typed producer) around a service
whose decide passes each event on — what the generator, verifier and curator run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from bench.report import aim_lines, write_report
from schemas.tasks import TaskProposed
from schemas.topics import TOPICS, Topic
from services.archiver.loop import Archiver
from services.archiver.settings import ArchiverSettings
from services.archiver.sources import ArchiverSource
from services.archiver.store import ArchiveStore
from streams.admin import create_topics
from streams.broker import LocalBroker
from streams.codec import encode, headers_for
from streams.consumer import TypedBatchConsumer
from streams.lifecycle import stop_process
from streams.producer import PRODUCER_DEFAULTS, TypedProducer
from streams.settings import load_bus_settings

__all__ = ["main"]

console = Console()

#: 20k events of 1 KiB: a few seconds per measurement on 2 shared cores, well past warm-up.
DEFAULT_EVENTS = 20_000
#: Medians of 3 runs: one slow outlier (another process on the box) does not move the figure.
DEFAULT_REPS = 3
#: Target encoded size of a bench event, in bytes.
EVENT_BYTES = 1024
#: Gives up on a consumer that has not seen all events by then (a stuck run, not a figure).
CONSUME_TIMEOUT_S = 90.0
#: Faust is ~10x slower than the rest: its windows are this fraction of --events.
FAUST_SHARE = 4
#: First argument that makes this script the faust worker process (internal).
FAUST_WORKER = "--faust-worker-process"
SHELL_WORKER = "--service-shell-process"
#: The bench topic is a renamed copy of this registered topic (3 partitions).
TEMPLATE = "flywheel.tasks"


def make_events(n: int) -> list[TaskProposed]:
    """`n` task events whose encoded JSON is EVENT_BYTES long."""
    def one(i: int, pad: int) -> TaskProposed:
        return TaskProposed(task_id=f"task-{i:08d}", template="send_message", family="tool",
                            split="train", index=i, goal="g" * pad, source="bench/0.1",
                            correlation_id="bench")
    pad = max(1, EVENT_BYTES - len(encode(one(0, 1))) + 1)
    return [one(i, pad) for i in range(n)]


def fresh(bootstrap: str) -> Topic:
    topic = TOPICS[TEMPLATE].renamed(f"bench-{uuid.uuid4().hex[:10]}")
    create_topics(bootstrap, [topic], with_dlq=True)
    return topic


# ---- producers: each returns events/s ---------------------------------------------------------

Wire = tuple[bytes, bytes, list[tuple[str, bytes]]]  # key, value, headers: what the loop sends


def produce_kafka_python(bootstrap: str, topic: Topic, values: list[Wire]) -> float:
    producer = KafkaProducer(bootstrap_servers=bootstrap, **PRODUCER_DEFAULTS)
    producer.partitions_for(topic.name)  # metadata outside the timing
    start = time.perf_counter()
    for key, value, headers in values:
        producer.send(topic.name, value=value, key=key, headers=headers)
    producer.flush()
    rate = len(values) / (time.perf_counter() - start)
    producer.close()
    return rate


def produce_aiokafka(bootstrap: str, topic: Topic, values: list[Wire]) -> float:
    async def go() -> float:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5,
                                    max_batch_size=PRODUCER_DEFAULTS["batch_size"])
        await producer.start()
        try:
            await producer.partitions_for(topic.name)
            start = time.perf_counter()
            futures = [await producer.send(topic.name, value=v, key=k, headers=h)
                       for k, v, h in values]
            await producer.flush()
            await asyncio.gather(*futures)
            return len(values) / (time.perf_counter() - start)
        finally:
            await producer.stop()
    return asyncio.run(go())


def produce_typed(bootstrap: str, topic: Topic, events: list[TaskProposed]) -> float:
    producer = TypedProducer(bootstrap, client_id="bench-typed")
    producer._producer.partitions_for(topic.name)  # metadata outside the timing
    start = time.perf_counter()
    for event in events:
        producer.send(topic, event)
    producer.flush()
    rate = len(events) / (time.perf_counter() - start)
    producer.close()
    return rate


# ---- consumers: each returns events/s from the first record to the last -------------------------

class Clock:
    """Times from the start of the poll that delivered the first record to the n-th record
    (so joining a group and fetching metadata are left out)."""

    def __init__(self, n: int, carried: int = 0) -> None:
        """`carried`: records the previous window's last poll delivered beyond its n (they
        open this window, timed from now)."""
        self.n, self.seen, self.first = n, carried, time.perf_counter()
        self.deadline = time.monotonic() + CONSUME_TIMEOUT_S
        self.poll_started = time.perf_counter()

    def add(self, count: int) -> bool:
        if count and not self.seen:
            self.first = self.poll_started
        self.seen += count
        self.poll_started = time.perf_counter()
        if time.monotonic() > self.deadline:
            raise TimeoutError(f"saw {self.seen} of {self.n} events in {CONSUME_TIMEOUT_S} s")
        return self.seen >= self.n

    def rate(self, count: int | None = None) -> float:
        """`count` (default every record seen) over the time since the first one."""
        return (self.seen if count is None else count) / (time.perf_counter() - self.first)


def consume_kafka_python(bootstrap: str, topic: Topic, n: int) -> float:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None,
                             auto_offset_reset="earliest", enable_auto_commit=False,
                             max_poll_records=5000)
    parts = [TopicPartition(topic.name, p) for p in range(topic.partitions)]
    consumer.assign(parts)
    clock = Clock(n)
    while not clock.add(sum(len(r) for r in consumer.poll(timeout_ms=500).values())):
        pass
    rate = clock.rate()
    consumer.close()
    return rate


def consume_aiokafka(bootstrap: str, topic: Topic, n: int) -> float:
    async def go() -> float:
        consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None,
                                    auto_offset_reset="earliest", enable_auto_commit=False)
        await consumer.start()
        try:
            consumer.assign([TopicPartition(topic.name, p) for p in range(topic.partitions)])
            clock = Clock(n)
            while not clock.add(sum(len(r) for r in (
                    await consumer.getmany(timeout_ms=500, max_records=5000)).values())):
                pass
            return clock.rate()
        finally:
            await consumer.stop()
    return asyncio.run(go())


def consume_typed(bootstrap: str, topic: Topic, n: int) -> float:
    with TypedBatchConsumer(bootstrap, [topic], f"bench-{uuid.uuid4().hex[:8]}") as consumer:
        clock = Clock(n)
        while not clock.add(len(consumer.poll_batch(500))):
            pass
        consumer.commit()
        return clock.rate()


def archive(bootstrap: str, topic: Topic, n: int, folder: Path) -> float:
    settings = ArchiverSettings(archive_dir=folder, group_id=f"bench-{uuid.uuid4().hex[:8]}")
    source = ArchiverSource(bootstrap, [topic], settings.group_id)
    try:
        archiver = Archiver(source, ArchiveStore(folder), settings)
        clock = Clock(n)
        while not clock.add(archiver.step()):
            pass
        archiver.flush()  # the figure includes writing every event durably
        return clock.rate()
    finally:
        source.close()


def faust_passthrough(bootstrap: str, n: int, reps: int, folder: Path,
                      worker_flag: str = FAUST_WORKER) -> list[float]:
    """A faust worker process decoding and re-producing every event (`worker_flag`: the naive
    per-event agent, or the services' shell); the input holds reps*n events and each window of
    n outputs is one measurement."""
    source, sink = fresh(bootstrap), fresh(bootstrap)
    values = [(source.key_of(e), encode(e), headers_for(e)) for e in make_events(n * reps)]
    produce_kafka_python(bootstrap, source, values)
    log = (folder / f"{worker_flag.strip('-')}.log").open("wb")
    data_dir = folder / worker_flag.strip("-")
    worker = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), worker_flag, bootstrap, source.name,
         sink.name, str(data_dir)], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        return asyncio.run(_output_windows(bootstrap, sink, n, reps, worker, folder))
    finally:
        stop_process(worker)
        log.close()


async def _output_windows(bootstrap: str, sink: Topic, n: int, reps: int,
                          worker: subprocess.Popen[bytes], folder: Path) -> list[float]:
    """The agent's output rate per window of `n` events, read with aiokafka. A poll that
    completes a window with records to spare carries them into the next window (the "faust
    stall" of earlier baselines — a last window of ~50 events/s — was those records, dropped at
    every window's end, missing from the last one: the agent had passed everything on)."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None,
                                auto_offset_reset="earliest", enable_auto_commit=False)
    await consumer.start()
    rates: list[float] = []
    try:
        consumer.assign([TopicPartition(sink.name, p) for p in range(sink.partitions)])
        carried = 0
        for _ in range(reps):
            clock = Clock(n, carried)
            try:
                while not clock.add(sum(len(r) for r in (
                        await consumer.getmany(timeout_ms=500, max_records=5000)).values())):
                    if worker.poll() is not None:
                        raise RuntimeError(f"the faust worker exited; see {folder}")
            except TimeoutError as error:  # the agent fell behind: report, go on
                console.print(f"  [yellow]faust window incomplete[/] ({error}); rate so far")
                rates.append(clock.rate())
                break
            rates.append(clock.rate(n))
            carried = clock.seen - n
    finally:
        await consumer.stop()
    return rates


# ---- the run ----------------------------------------------------------------------------------

@dataclass
class Figures:
    runs: dict[str, list[float]] = field(default_factory=dict)

    def add(self, name: str, rate: float) -> None:
        self.runs.setdefault(name, []).append(rate)
        console.print(f"  {name}: {rate:,.0f} events/s")

    def median(self, name: str) -> float:
        return statistics.median(self.runs[name])


PRODUCERS = ("kafka-python produce", "aiokafka produce", "typed producer")
CONSUMERS = ("kafka-python consume", "aiokafka consume", "typed batch consumer",
             "faust pass-through agent", "faust service shell", "archiver (to Parquet)")


def run(bootstrap: str, n: int, reps: int, folder: Path) -> Figures:
    figures = Figures()
    events = make_events(n)
    # The raw clients send exactly the records the typed producer sends (same key, bytes and
    # headers), so the consumers and the archiver read what the loop really carries.
    values = [(TOPICS[TEMPLATE].key_of(e), encode(e), headers_for(e)) for e in events]
    console.print(f"[bold]bus bench[/]: {n:,} events of {len(values[0][1])} bytes, {reps} runs, "
                  f"broker {bootstrap}")
    for rep in range(reps):
        console.print(f"run {rep + 1}/{reps}")
        topic = fresh(bootstrap)
        figures.add("kafka-python produce", produce_kafka_python(bootstrap, topic, values))
        figures.add("aiokafka produce", produce_aiokafka(bootstrap, fresh(bootstrap), values))
        figures.add("typed producer", produce_typed(bootstrap, fresh(bootstrap), events))
        figures.add("kafka-python consume", consume_kafka_python(bootstrap, topic, n))
        figures.add("aiokafka consume", consume_aiokafka(bootstrap, topic, n))
        figures.add("typed batch consumer", consume_typed(bootstrap, topic, n))
        figures.add("archiver (to Parquet)",
                    archive(bootstrap, topic, n, folder / f"archive-{rep}"))
    console.print("faust pass-through agent (one worker, one window per run)")
    for rate in faust_passthrough(bootstrap, max(1, n // FAUST_SHARE), reps, folder):
        figures.add("faust pass-through agent", rate)
    console.print("the services' faust shell, passing through (one worker, one window per run)")
    for rate in faust_passthrough(bootstrap, max(1, n // FAUST_SHARE), reps, folder, SHELL_WORKER):
        figures.add("faust service shell", rate)
    return figures


#: Each wrapper's aim as a share of its best raw peer's rate in the same run.
AIMS = {"typed producer": 0.8, "typed batch consumer": 0.7, "faust pass-through agent": 0.5,
        "faust service shell": 0.5, "archiver (to Parquet)": 0.6}


def best_raw(figures: Figures, name: str) -> float:
    """The faster raw client's median rate for the job `name` does (produce or consume)."""
    raw = PRODUCERS[:2] if name in PRODUCERS else CONSUMERS[:2]
    return max(figures.median(r) for r in raw)


def aims(figures: Figures) -> dict[str, tuple[float, float]]:
    return {name: (figures.median(name) / best_raw(figures, name), bound)
            for name, bound in AIMS.items() if name in figures.runs}


def summary(figures: Figures) -> Table:
    table = Table("client", "events/s (median)", "ratio to best raw peer", "runs",
                  title="bus throughput, 1 KiB events")
    for name in (*PRODUCERS, *CONSUMERS):
        if name in figures.runs:
            rate = figures.median(name)
            table.add_row(name, f"{rate:,.0f}", f"{rate / best_raw(figures, name):.2f}",
                          ", ".join(f"{r:,.0f}" for r in figures.runs[name]))
    return table


def faust_worker(bootstrap: str, in_name: str, out_name: str, data_dir: str) -> None:
    """The pass-through agent process: decode each event of IN and re-produce it to OUT."""
    from streams.faust_app import run_relay

    source, sink = TOPICS[TEMPLATE].renamed(in_name), TOPICS[TEMPLATE].renamed(out_name)
    run_relay(bootstrap, source, sink, data_dir, f"bench-{in_name}")


def shell_worker(bootstrap: str, in_name: str, out_name: str, data_dir: str) -> None:
    """The services' shell (services.dataflow.agent.serve: batches, the event store, the typed
    producer, dead letters) around a service whose decide passes each event on to OUT."""
    import os

    from services.dataflow.agent import serve

    source, sink = TOPICS[TEMPLATE].renamed(in_name), TOPICS[TEMPLATE].renamed(out_name)

    class PassThrough:
        name = "bench-passthrough"
        inputs = (source,)
        apply_outputs = False

        def apply(self, stored: object) -> None:
            """Nothing to fold."""

        def handle(self, stored: Any) -> list[tuple[Topic, Any]]:
            return [(sink, stored.event)]

        def tick(self) -> list[tuple[Topic, Any]]:
            return []

    os.environ.update({"KAFKA_BOOTSTRAP_SERVERS": bootstrap, "FLYWHEEL_DATA_DIR": data_dir})
    sys.argv = sys.argv[:1]
    serve(lambda bus, _bootstrap: PassThrough(), "bench-passthrough", group_id=f"bench-{in_name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=DEFAULT_EVENTS, help="events per run")
    parser.add_argument("--reps", type=int, default=DEFAULT_REPS, help="runs per figure")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [FAUST_WORKER]:
        faust_worker(*argv[1:])
        return 0
    if argv[:1] == [SHELL_WORKER]:
        shell_worker(*argv[1:])
        return 0
    args = parser.parse_args(argv)
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-bus-")))
        bootstrap = load_bus_settings().bootstrap_or_none()
        if bootstrap is None:
            bootstrap = stack.enter_context(LocalBroker.on_free_port(folder / "broker")).bootstrap
        figures = run(bootstrap, args.events, args.reps, folder)
        console.print(summary(figures))
        reached = aims(figures)
        for line in aim_lines(reached):
            console.print(line)
        if args.json is not None:
            write_report(args.json, "bus", figures.runs, reached, events=args.events,
                         reps=args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())

