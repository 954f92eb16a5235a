"""Every consumer of the loop as its own `python -m` process on one broker, and what each reads.

`ServiceFleet` starts the archiver, the device runner of one sim device, the rollout, the
generator, verifier, curator and evolver (faust agents), the gate, the trainer and the evaluator
with one data dir, then asks the broker which consumer group reads which topics, so a test can
attack every consumer of every topic without a list that goes stale.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from kafka import KafkaProducer

from streams.broker import free_port
from streams.dlq import read_dead_letters

__all__ = ["SERVICE_MODULES", "ServiceFleet"]

ROOT = Path(__file__).resolve().parents[2]
SERVICE_MODULES = ("services.archiver", "services.device_runner", "services.rollout", "services.generator",
                   "services.verifier", "services.curator", "services.evolver", "services.gate",
                   "services.trainer", "services.evaluator")


@dataclass
class ServiceFleet:
    bootstrap: str
    data_dir: Path
    device_id: str = "sim-0"
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    logs: dict[str, Path] = field(default_factory=dict)

    def start(self) -> ServiceFleet:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FLYWHEEL_", "KAFKA_"))}
        env.update(KAFKA_BOOTSTRAP_SERVERS=self.bootstrap, FLYWHEEL_DATA_DIR=str(self.data_dir),
                   PYTHONPATH=str(ROOT), FLYWHEEL_DEVICE_RUNNER_DEVICE_ID=self.device_id,
                   FLYWHEEL_GATE_PORT=str(free_port()), FLYWHEEL_GENERATOR_MAX_TASKS="0",
                   FLYWHEEL_ROLLOUT_POLICY="noop")
        (self.data_dir / "logs").mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "services.cli.main", "gate", "keygen"], env=env, cwd=ROOT,
                       check=True, capture_output=True, timeout=120)  # the gate refuses to start without a key
        for module in SERVICE_MODULES:
            self.logs[module] = self.data_dir / "logs" / f"{module}.log"
            self.processes[module] = subprocess.Popen(
                [sys.executable, "-m", module], env=env, cwd=ROOT, stdout=self.logs[module].open("wb"),
                stderr=subprocess.STDOUT)
        return self

    def died(self) -> dict[str, str]:
        """The services that exited, with the end of their logs."""
        return {m: self.logs[m].read_text(errors="replace")[-2000:] for m, p in self.processes.items()
                if p.poll() is not None}

    def discover_readers(self, topics: list[str], timeout_s: float, settle_s: float = 8.0
                         ) -> dict[str, set[str]]:
        """Consumer -> the topics it reads, learnt the way an attacker would: a junk record is
        sent to every topic every second, and whoever dead-letters it reads that topic. Returns
        once the map has not grown for `settle_s` (every consumer joined and assigned)."""
        producer = KafkaProducer(bootstrap_servers=self.bootstrap, acks="all")
        readers: dict[str, set[str]] = {}
        deadline, grew = time.monotonic() + timeout_s, time.monotonic()
        try:
            while time.monotonic() < deadline:
                assert not self.died(), self.died()
                for topic in topics:
                    producer.send(topic, value=b"probe: not json", key=b"probe", partition=0)
                producer.flush(30)
                time.sleep(1.0)
                seen = {}
                for topic in topics:
                    for letter in read_dead_letters(self.bootstrap, topic, limit=100_000, idle_ms=300):
                        if letter.consumer:
                            seen.setdefault(letter.consumer, set()).add(topic)
                if seen != readers:
                    readers, grew = seen, time.monotonic()
                elif readers and time.monotonic() - grew >= settle_s:
                    return readers
        finally:
            producer.close()
        raise AssertionError(f"the readers did not settle in {timeout_s} s: {readers}")

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()
        for process in self.processes.values():
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
