"""The evolver service against the real broker: failures in, a gated promotion out, restart-safe."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from devices.suite.policies import OraclePolicy
from schemas.envelope import Event, utc_now
from schemas.settings import SettingsError
from schemas.topics import Topic
from services.dataflow.evolution.decide import fold, pending_promotions, veto
from services.dataflow.evolution.settings import load_evolver_settings
from services.dataflow.registry import HarnessRegistry
from services.dataflow.runner import Runner
from services.dataflow.signing import Signer
from services.dataflow.store import EventStore, Stored
from services.dataflow.vetoes import VetoVerifier, sign_veto
from services.evolver.service import INPUT_TOPICS, EvolverService
from services.evolver.suite_runner import suite_collector
from streams.consumer import TypedBatchConsumer
from streams.producer import TypedProducer
from tests.services.evolver.test_suite_gate import DEGRADED

TOPIC_OF = {"task.proposed": "flywheel.tasks", "episode.ended": "flywheel.episodes",
            "verdict.issued": "flywheel.verdicts", "failure.traced": "flywheel.failures"}


def read_all(bootstrap: str, topic: Topic, want: int, timeout_s: float = 20.0) -> list[Event]:
    consumer = TypedBatchConsumer(bootstrap, [topic], group_id=None)
    out: list[Event] = []
    deadline = time.monotonic() + timeout_s
    try:
        while len(out) < want and time.monotonic() < deadline:
            out += [r.event for r in consumer.poll_batch(500)]
        out += [r.event for r in consumer.poll_batch(500)]  # anything beyond `want`
    finally:
        consumer.close()
    return out


def test_the_service_promotes_through_the_gate_and_a_restart_duplicates_nothing(
        bootstrap: str, fresh_topic: Callable[[str], Topic], tmp_path: Path) -> None:
    topics = {name: fresh_topic(name) for name in INPUT_TOPICS}
    registry = HarnessRegistry.at_data_dir(tmp_path)
    registry.init(DEGRADED)
    settings = load_evolver_settings(n_per_template=2, policy="oracle")
    history = suite_collector(OraclePolicy, n_per_template=2)(None, DEGRADED, 1)
    items = [Stored(e, topics[TOPIC_OF[e.type]].name) for e in history]
    failures = [e.event_id for e in history if e.type == "failure.traced"]

    with TypedProducer(bootstrap, client_id="evolver-test") as producer:
        store = EventStore(tmp_path / "evolver.sqlite")
        service = EvolverService(registry, settings, topics=topics)
        assert service.state.current == DEGRADED["version"]
        runner = Runner(service, store, producer)
        cut = len(items) // 2
        runner.process(items[:cut])
        store.close()

        # crash and restart: the state comes back from the store, the rest is processed once
        store = EventStore(tmp_path / "evolver.sqlite")
        service = EvolverService(registry, settings, topics=topics)
        runner = Runner(service, store, producer)
        assert runner.restore() >= cut
        runner.process(items)  # the first half is redelivered
        store.close()

    out = read_all(bootstrap, topics["flywheel.harness"], want=4)
    assert [e.type for e in out] == ["harness.proposed", "harness.evaluated",
                                     "harness.evaluated", "harness.promoted"]
    assert len({e.event_id for e in out}) == 4
    proposed, promoted = out[0], out[-1]
    assert proposed.changes[0].name == "messages.send" and proposed.changes[0].op == "add"
    # streaming: the proposal goes out once min_support failures have hit the hidden tool
    assert len(promoted.motivated_by) == settings.min_support
    assert set(promoted.motivated_by) <= set(failures)
    assert registry.current() == promoted.harness != DEGRADED["version"]
    assert promoted.dev_delta is not None and promoted.dev_delta > 0


def test_a_person_vetoes_a_pending_promotion_through_the_topic(
        bootstrap: str, fresh_topic: Callable[[str], Topic], tmp_path: Path) -> None:
    topics = {name: fresh_topic(name) for name in INPUT_TOPICS}
    registry = HarnessRegistry.at_data_dir(tmp_path)
    registry.init(DEGRADED)
    settings = load_evolver_settings(n_per_template=1, veto_window_s=3600)
    history = suite_collector(OraclePolicy, n_per_template=1)(None, DEGRADED, 1)
    gate, forger = Signer(Ed25519PrivateKey.generate()), Signer(Ed25519PrivateKey.generate())
    with TypedProducer(bootstrap, client_id="evolver-test") as producer, \
            EventStore(tmp_path / "evolver.sqlite") as store:
        service = EvolverService(registry, settings, topics=topics, now=utc_now,
                                 vetoes=VetoVerifier(gate.public_key))
        runner = Runner(service, store, producer)
        runner.process([Stored(e, topics[TOPIC_OF[e.type]].name) for e in history])
        assert runner.tick() == 0  # the window has not passed
        # the gate page folds the harness topic to list what waits, then publishes a veto
        seen = read_all(bootstrap, topics["flywheel.harness"], want=3)
        (pending,) = pending_promotions(fold(DEGRADED, seen, service.config), service.config)
        unsigned = veto(service.state, pending.proposal_id, "ana", "not now")
        # anyone who can write to the topic: unsigned, or signed with some other key
        forged = [unsigned, sign_veto(forger, unsigned.model_copy(update={"event_id": "f2"}))]
        assert runner.process([Stored(f, topics["flywheel.harness"].name) for f in forged]) == 0
        assert dict(service.vetoes.refused) == {"unsigned": 1, "unknown_key": 1}
        vetoed = sign_veto(gate, unsigned.model_copy(update={"event_id": "v1"}))
        producer.send(topics["flywheel.harness"], vetoed).get(timeout=10)
        runner.process([Stored(vetoed, topics["flywheel.harness"].name)])  # as consumed
    out = read_all(bootstrap, topics["flywheel.harness"], want=5)
    assert [e.type for e in out] == ["harness.proposed", "harness.evaluated",
                                     "harness.evaluated", "harness.vetoed", "harness.rejected"]
    assert out[-1].reason == "vetoed" and out[-1].proposal_id == pending.proposal_id
    assert registry.current() == DEGRADED["version"]  # nothing was promoted


def test_the_veto_window_comes_from_its_variable_and_a_bad_value_is_one_sentence(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FLYWHEEL_EVOLVER_VETO_WINDOW_S", "90")
    registry = HarnessRegistry.at_data_dir(tmp_path)
    service = EvolverService(registry, load_evolver_settings(evaluate=False))
    assert service.config.veto_window_s == 90
    for bad in ("soon", "inf", "-5", "1e12"):  # inf / huge would overflow the window's timedelta
        monkeypatch.setenv("FLYWHEEL_EVOLVER_VETO_WINDOW_S", bad)
        with pytest.raises(SettingsError) as caught:
            load_evolver_settings()
        assert caught.value.variable == "FLYWHEEL_EVOLVER_VETO_WINDOW_S"
        assert str(caught.value).count(".") <= 2 and "\n" not in str(caught.value)


def test_with_a_window_and_no_clock_given_ticks_promote_once_the_wall_clock_passes_it(
        bootstrap: str, fresh_topic: Callable[[str], Topic], tmp_path: Path) -> None:
    topics = {name: fresh_topic(name) for name in INPUT_TOPICS}
    registry = HarnessRegistry.at_data_dir(tmp_path)
    registry.init(DEGRADED)
    history = suite_collector(OraclePolicy, n_per_template=1)(None, DEGRADED, 1)
    with TypedProducer(bootstrap, client_id="evolver-test") as producer, \
            EventStore(tmp_path / "evolver.sqlite") as store:
        service = EvolverService(registry, load_evolver_settings(n_per_template=1,
                                                                 veto_window_s=1.0),
                                 topics=topics)  # as python -m services.evolver builds it
        runner = Runner(service, store, producer)
        runner.process([Stored(e, topics[TOPIC_OF[e.type]].name) for e in history])
        (waiting,) = service.state.pending_since.items()
        assert registry.current() == DEGRADED["version"]
        deadline = time.monotonic() + 30  # a guard against hangs, not a speed assertion
        while runner.tick() == 0:
            assert time.monotonic() < deadline, "never promoted"
            time.sleep(0.1)
        promoted_at = utc_now()
    assert promoted_at - waiting[1] >= timedelta(seconds=1)  # not before the window ended
    assert registry.current() != DEGRADED["version"]
    assert service.state.status[waiting[0]] == "promoted"
