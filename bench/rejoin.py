"""How long a consumer group member takes to read again after a SIGKILL, per group setting.

How to run:  .venv/bin/python bench/rejoin.py [--reps 3]
(uses KAFKA_BOOTSTRAP_SERVERS when set, else starts a private local broker). For each setting
a member process (the loop's TypedBatchConsumer) joins, reads, and is killed with SIGKILL; a new
one is started at once and the figure is the time from its start to its first record, beside
the same time on a fresh start (no dead member in the group). Medians of --reps runs.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from schemas.topics import TOPICS
from streams.admin import create_topics
from streams.broker import LocalBroker
from streams.producer import TypedProducer
from streams.settings import load_bus_settings
from tests.services.archiver.helpers import task

__all__ = ["main"]

console = Console()

#: First argument that makes this script the member process (internal).
MEMBER = "--member-process"
#: A member that has not read a record by then is reported as stuck.
READ_TIMEOUT_S = 60.0
#: Settings compared: the loop's defaults, static membership, and a shorter session.
SETTINGS: dict[str, dict[str, object]] = {
    "session 6 s (before)": {"session_timeout_ms": 6000, "heartbeat_interval_ms": 2000},
    "session 6 s + static member": {"session_timeout_ms": 6000, "heartbeat_interval_ms": 2000,
                                    "group_instance_id": "member-0"},
    "session 3 s": {"session_timeout_ms": 3000, "heartbeat_interval_ms": 1000},
    "session 3 s + static member": {"session_timeout_ms": 3000, "heartbeat_interval_ms": 1000,
                                    "group_instance_id": "member-0"},
    "session 3 s + rebalance 3 s": {"session_timeout_ms": 3000, "heartbeat_interval_ms": 1000,
                                    "rebalance_timeout_ms": 3000},
    "session 3 s + rebalance 3 s + static": {
        "session_timeout_ms": 3000, "heartbeat_interval_ms": 1000,
        "rebalance_timeout_ms": 3000, "group_instance_id": "member-0"},
    "session 2 s + rebalance 2 s": {"session_timeout_ms": 2000, "heartbeat_interval_ms": 600,
                                    "rebalance_timeout_ms": 2000},
}


def member(bootstrap: str, topic_name: str, group: str, config_json: str) -> None:
    """The member process: join, print the time of the first record, then keep polling."""
    from streams.consumer import TypedBatchConsumer

    started = time.monotonic()
    topic = TOPICS["flywheel.tasks"].renamed(topic_name)
    consumer = TypedBatchConsumer(bootstrap, [topic], group, **json.loads(config_json))
    while True:
        batch = consumer.poll_batch(200)
        if batch:
            print(json.dumps({"first_record_s": time.monotonic() - started}), flush=True)
            consumer.commit()
            break
    while True:
        consumer.poll_batch(200)


def _spawn(bootstrap: str, topic: str, group: str, config: dict[str, object]
           ) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(Path(__file__).resolve()), MEMBER, bootstrap,
                             topic, group, json.dumps(config)], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def _first_record_s(process: subprocess.Popen[str]) -> float:
    assert process.stdout is not None
    deadline = time.monotonic() + READ_TIMEOUT_S
    line = process.stdout.readline()
    if not line or time.monotonic() > deadline:
        raise TimeoutError("the member read nothing")
    return float(json.loads(line)["first_record_s"])


def one(bootstrap: str, config: dict[str, object]) -> tuple[float, float]:
    """(fresh start, restart after SIGKILL): seconds from process start to the first record."""
    topic = TOPICS["flywheel.tasks"].renamed(f"rejoin-{uuid.uuid4().hex[:8]}")
    create_topics(bootstrap, [topic], with_dlq=True)
    group = f"rejoin-{uuid.uuid4().hex[:8]}"
    with TypedProducer(bootstrap, client_id="bench-rejoin") as producer:
        producer.send(topic, task(0))
        producer.flush()
        first = _spawn(bootstrap, topic.name, group, config)
        fresh = _first_record_s(first)
        first.send_signal(signal.SIGKILL)
        first.wait()
        producer.send(topic, task(1))
        producer.flush()
        second = _spawn(bootstrap, topic.name, group, config)
        try:
            again = _first_record_s(second)
        finally:
            second.kill()
            second.wait()
    return fresh, again


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [MEMBER]:
        member(*argv[1:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3, help="runs per setting")
    parser.add_argument("--only", nargs="*", help="settings whose name contains one of these")
    args = parser.parse_args(argv)
    table = Table("group setting", "fresh start → first record (s)",
                  "after SIGKILL → first record (s)", "runs (after kill)",
                  title="rejoin after SIGKILL, medians")
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-rejoin-")))
        bootstrap = load_bus_settings().bootstrap_or_none()
        if bootstrap is None:
            bootstrap = stack.enter_context(LocalBroker.on_free_port(folder / "broker")).bootstrap
        chosen = [n for n in SETTINGS if not args.only or any(o in n for o in args.only)]
        for name in chosen:
            config = SETTINGS[name]
            runs = []
            for _ in range(args.reps):
                try:
                    runs.append(one(bootstrap, config))
                except TimeoutError as error:
                    console.print(f"  {name}: {error}")
            if runs:
                console.print(f"  {name}: " + ", ".join(f"{a:.1f}/{b:.1f}" for a, b in runs))
                table.add_row(name, f"{statistics.median(a for a, _ in runs):.1f}",
                              f"{statistics.median(b for _, b in runs):.1f}",
                              ", ".join(f"{b:.1f}" for _, b in runs))
    console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
