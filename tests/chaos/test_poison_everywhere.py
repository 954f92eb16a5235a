"""The poison corpus against every consumer of every topic, each service its own process: the
archiver, a device runner, the rollout, the faust agents (generator, verifier, curator,
evolver), the gate, the trainer and the evaluator. Each bad record lands in the dead-letter topic
exactly once per consumer that reads its topic, naming that consumer; no service dies, and each
still reads the record sent after the corpus."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from kafka import KafkaProducer

from schemas.topics import TOPICS
from services.device_runner.farm import partition_for
from streams.admin import create_topics
from streams.broker import LocalBroker
from streams.dlq import read_dead_letters
from tests.chaos.conftest import ChaosFigures
from tests.chaos.corpus import OVERSIZE_BYTES, poison_corpus
from tests.chaos.fleet import SERVICE_MODULES, ServiceFleet
from tests.schemas.strategies import model_strategy

pytestmark = pytest.mark.integration

#: Guards against hangs only; not a speed assertion.
WAIT_S = 240.0


def _sample(model: Any) -> Any:
    """One valid event of `model` (what the corpus mutates)."""
    found: list[Any] = []

    @settings(max_examples=1, deadline=None, database=None,
              suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
    @given(model_strategy(model))
    def take(event: Any) -> None:
        found.append(event)

    take()
    return found[0]


def _device_on_partition_0(partitions: int) -> str:
    return next(f"sim-{i}" for i in range(1000) if partition_for(f"sim-{i}", partitions) == 0)


def test_every_consumer_dead_letters_each_bad_record_once(tmp_path: Path, chaos_figures: ChaosFigures) -> None:
    with LocalBroker.on_free_port(tmp_path / "broker") as broker:
        create_topics(broker.bootstrap, TOPICS.values())
        device = _device_on_partition_0(TOPICS["flywheel.actions"].partitions)  # the runner reads partition 0
        fleet = ServiceFleet(broker.bootstrap, tmp_path / "var", device_id=device).start()
        try:
            readers = fleet.discover_readers(sorted(TOPICS), timeout_s=WAIT_S)
            where: dict[tuple[str, int], str] = {}  # (topic, offset on partition 0) -> poison kind
            producer = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all",
                                     max_request_size=4 * OVERSIZE_BYTES)
            try:
                read_topics = sorted({t for topics in readers.values() for t in topics})
                for name in read_topics:
                    for bad in poison_corpus(_sample(next(iter(TOPICS[name].models.values())))):
                        meta = producer.send(name, value=bad.value, key=bad.key, partition=0,
                                             headers=list(bad.headers)).get(30)
                        where[(name, meta.offset)] = bad.kind
                    # a last record after the corpus: each reader still reads on (it is refused too)
                    meta = producer.send(name, value=b"after the corpus", key=b"k", partition=0).get(30)
                    where[(name, meta.offset)] = "a record after the corpus"
            finally:
                producer.close()

            def letters_of(name: str) -> Counter[tuple[str, int]]:
                return Counter((d.consumer or "", d.source_offset or -1)
                               for d in read_dead_letters(broker.bootstrap, name, limit=100_000, idle_ms=300)
                               if (name, d.source_offset) in where)

            wanted = {(consumer, name, offset) for consumer, topics in readers.items() for name in topics
                      for (topic, offset) in where if topic == name}
            deadline = time.monotonic() + WAIT_S
            while True:
                assert not fleet.died(), fleet.died()
                got = {(c, name, o) for name in read_topics for (c, o) in letters_of(name)}
                if wanted <= got or time.monotonic() > deadline:
                    break
                time.sleep(2.0)
            time.sleep(3.0)  # a second letter for one record would show by now
            counts = {name: letters_of(name) for name in read_topics}
            assert not fleet.died(), fleet.died()
        finally:
            fleet.stop()

    missing = sorted(wanted - {(c, n, o) for n, seen in counts.items() for (c, o) in seen})
    assert not missing, [(c, n, where[(n, o)]) for c, n, o in missing[:20]]
    twice = [(c, n, where[(n, o)], k) for n, seen in counts.items() for (c, o), k in seen.items() if k != 1]
    assert not twice, twice[:20]
    names = {module.rsplit(".", 1)[1].replace("_", "-") for module in SERVICE_MODULES}
    assert len(readers) >= len(names), (sorted(readers), sorted(names))  # one consumer per service at least
    kinds = len(set(where.values())) - 1
    for consumer, topics in sorted(readers.items()):
        chaos_figures.record(f"{consumer} (poison, own process)", acknowledged=0, lost=0, duplicated=0,
                             **{"dead-lettered": f"{sum(1 for (c, n, _o) in wanted if c == consumer)}/"
                                                 f"{sum(1 for (n, _o) in where if n in topics)}"},
                             note=f"{kinds} kinds on {', '.join(sorted(t.removeprefix('flywheel.') for t in topics))}")
    (tmp_path / "readers.json").write_text(json.dumps({c: sorted(t) for c, t in readers.items()}, indent=2))
