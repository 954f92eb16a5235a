"""The gate's harness page against the real broker and a real evolver: a pending promotion is
listed, a person's signed veto reaches the evolver through the topic and rejects it, one left
alone is promoted after the window, and forged or misplaced vetoes change nothing."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest

from devices.suite.policies import OraclePolicy
from schemas.envelope import Event, utc_now
from schemas.harness import HarnessVetoed
from schemas.topics import Topic
from services.dataflow.evolution.settings import load_evolver_settings
from services.dataflow.registry import HarnessRegistry
from services.dataflow.runner import Runner
from services.dataflow.store import EventStore, Stored
from services.dataflow.vetoes import VetoVerifier
from services.evolver.service import INPUT_TOPICS, EvolverService
from services.evolver.suite_runner import suite_collector
from services.gate.launch import GateHandle, start_gate
from services.gate.service import GateTopics
from services.gate.settings import GateSettings
from streams.consumer import TypedBatchConsumer
from streams.producer import TypedProducer
from tests.services.evolver.test_suite_gate import DEGRADED
from tests.services.gate.helpers import wait_for

pytestmark = pytest.mark.integration

TOPIC_OF = {"task.proposed": "flywheel.tasks", "episode.ended": "flywheel.episodes",
            "verdict.issued": "flywheel.verdicts", "failure.traced": "flywheel.failures"}
WINDOW_S = 3600


@dataclass
class Loop:
    """An evolver with a pending promotion, and a gate reading the same harness topic."""

    bootstrap: str
    topics: dict[str, Topic]
    registry: HarnessRegistry
    service: EvolverService
    runner: Runner
    clock: list[datetime]
    gate: GateHandle
    token: str
    failures: list[str]

    @property
    def harness(self) -> Topic:
        return self.topics["flywheel.harness"]

    def harness_events(self) -> list[Event]:
        consumer = TypedBatchConsumer(self.bootstrap, [self.harness], group_id=None)
        try:
            out: list[Event] = []
            while batch := consumer.poll_batch(1000):
                out += [r.event for r in batch]
            return out
        finally:
            consumer.close()

    def evolver_reads_the_topic(self) -> int:
        """The evolver consumes the harness topic as it would running (its own outputs and
        anything already processed are skipped by the store)."""
        return self.runner.process([Stored(e, self.harness.name) for e in self.harness_events()])

    def pending_id(self) -> str:
        (row,) = self.gate.gate.harness.pending()
        return row.proposal_id


@pytest.fixture
def loop(bootstrap: str, fresh_topic: Callable[[str], Topic], tmp_path: Path) -> Iterator[Loop]:
    topics = {name: fresh_topic(name) for name in INPUT_TOPICS}
    registry = HarnessRegistry.at_data_dir(tmp_path)
    registry.init(DEGRADED)
    gate_topics = GateTopics(topics["flywheel.tasks"], topics["flywheel.episodes"],
                             topics["flywheel.verdicts"], topics["flywheel.failures"],
                             fresh_topic("flywheel.reviews"), topics["flywheel.harness"])
    gate = start_gate(bootstrap, tmp_path, GateSettings(port=0), topics=gate_topics,
                      create_key=True, local_reviewer="alice", veto_window_s=WINDOW_S)
    clock = [utc_now()]
    history = suite_collector(OraclePolicy, n_per_template=1)(None, DEGRADED, 1)
    try:
        with TypedProducer(bootstrap, client_id="evolver-test") as producer, \
                EventStore(tmp_path / "evolver.sqlite") as store:
            service = EvolverService(
                registry, load_evolver_settings(n_per_template=1, veto_window_s=WINDOW_S),
                topics=topics, now=lambda: clock[0],
                vetoes=VetoVerifier.for_data_dir(tmp_path))
            runner = Runner(service, store, producer)
            runner.process([Stored(e, topics[TOPIC_OF[e.type]].name) for e in history])
            found = Loop(bootstrap, topics, registry, service, runner, clock, gate,
                         gate.local_token or "",
                         [e.event_id for e in history if e.type == "failure.traced"])
            wait_for(lambda: len(gate.gate.harness.pending()) == 1,
                     what="the pending promotion on the gate's board")
            yield found
    finally:
        gate.stop()


@pytest.fixture
def client(loop: Loop) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=loop.gate.url, timeout=30) as signed_in:
        answer = signed_in.post("/login", data={"token": loop.token})
        assert answer.status_code == 303
        yield signed_in


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, "no CSRF field on the page"
    return found.group(1)


def test_the_page_lists_the_pending_promotion_with_its_evidence(loop: Loop,
                                                                client: httpx.Client) -> None:
    proposal_id = loop.pending_id()
    dev = loop.service.state.evaluations[(proposal_id, "dev")]
    main = client.get("/").text
    assert 'href="/harness"' in main and "1 harness promotion waiting" in main
    page = html.unescape(client.get("/harness").text)
    assert proposal_id in page
    assert "tool messages.send shown to the agent" in page  # DEGRADED hides it; the fix
    assert f"{dev.delta:+.3f} (95% interval {dev.delta_low:+.3f} to {dev.delta_high:+.3f}" \
        in page
    for family, delta in dev.family_deltas.items():
        assert f"{family} {delta:+.3f}" in page
    assert "held:" in page
    proposal = loop.service.state.proposals[proposal_id]
    assert proposal.motivated_by and set(proposal.motivated_by) <= set(loop.failures)
    for failure_id in proposal.motivated_by:
        assert failure_id in page
    left = int(re.search(r'data-seconds="(\d+)"', page).group(1))  # type: ignore[union-attr]
    assert WINDOW_S - 120 < left <= WINDOW_S
    api = client.get("/api/harness", headers={"Authorization": f"Bearer {loop.token}"}).json()
    assert [p["proposal_id"] for p in api["pending"]] == [proposal_id]
    assert api["pending"][0]["dev"]["low"] == dev.delta_low
    assert client.get("/api/harness").status_code == 401


def test_a_veto_reaches_the_evolver_which_rejects_the_promotion(loop: Loop,
                                                                client: httpx.Client) -> None:
    proposal_id = loop.pending_id()
    before = loop.registry.current()
    forged = client.post(f"/harness/{proposal_id}/veto", data={"csrf": "forged"})
    assert forged.status_code == 403

    csrf = csrf_of(client.get("/harness").text)
    answer = client.post(f"/harness/{proposal_id}/veto",
                         data={"csrf": csrf, "note": "too broad for one week of data"})
    assert answer.status_code == 303 and "vetoed=" in answer.headers["location"]
    vetoes = [e for e in loop.harness_events() if isinstance(e, HarnessVetoed)]
    assert [(v.proposal_id, v.reviewer, v.note) for v in vetoes] == [
        (proposal_id, "alice", "too broad for one week of data")]
    assert vetoes[0].key_id == loop.gate.gate.signer.key_id and vetoes[0].signature
    again = client.post(f"/harness/{proposal_id}/veto", data={"csrf": csrf})
    assert again.status_code == 409 and "already vetoed by alice" in again.text

    assert loop.evolver_reads_the_topic() == 1  # harness.rejected
    rejected = loop.harness_events()[-1]
    assert rejected.type == "harness.rejected" and rejected.reason == "vetoed"
    assert rejected.detail == "vetoed by alice: too broad for one week of data"
    assert loop.service.vetoes.accepted == 1
    loop.clock[0] = utc_now() + timedelta(seconds=WINDOW_S + 1)
    assert loop.runner.tick() == 0  # the window passed, but nothing waits any more
    assert loop.registry.current() == before == DEGRADED["version"]

    wait_for(lambda: loop.gate.gate.harness.status(proposal_id) == "rejected",
             what="the rejection on the gate's board")
    assert 'id="none"' in client.get("/harness").text
    late = client.post(f"/harness/{proposal_id}/veto", data={"csrf": csrf})
    assert late.status_code == 409 and "already rejected (vetoed" in late.text


def test_a_promotion_left_alone_is_promoted_after_the_window(loop: Loop,
                                                             client: httpx.Client) -> None:
    proposal_id = loop.pending_id()
    assert loop.runner.tick() == 0  # inside the window
    loop.clock[0] = utc_now() + timedelta(seconds=WINDOW_S + 1)
    assert loop.runner.tick() == 1
    promoted = loop.harness_events()[-1]
    assert promoted.type == "harness.promoted" and promoted.proposal_id == proposal_id
    assert loop.registry.current() == promoted.harness != DEGRADED["version"]

    wait_for(lambda: loop.gate.gate.harness.status(proposal_id) == "promoted",
             what="the promotion on the gate's board")
    assert 'id="none"' in client.get("/harness").text
    api = httpx.post(f"{loop.gate.url}/api/harness/{proposal_id}/veto", json={"note": "late"},
                     headers={"Authorization": f"Bearer {loop.token}"})
    assert api.status_code == 409
    assert api.json()["error"] == (f"proposal {proposal_id} is promoted, not pending; only "
                                   "pending promotions can be vetoed")
    assert not [e for e in loop.harness_events() if isinstance(e, HarnessVetoed)]


def test_unknown_proposals_and_forged_vetoes_change_nothing(loop: Loop,
                                                            client: httpx.Client) -> None:
    proposal_id = loop.pending_id()
    csrf = csrf_of(client.get("/harness").text)
    unknown = client.post("/harness/hp-nope/veto", data={"csrf": csrf})
    assert unknown.status_code == 404
    assert "no harness proposal 'hp-nope' is known to the gate" in html.unescape(unknown.text)
    api = httpx.post(f"{loop.gate.url}/api/harness/hp-nope/veto",
                     headers={"Authorization": f"Bearer {loop.token}"})
    assert api.status_code == 404 and api.json()["error"].startswith("no harness proposal")
    nobody = httpx.post(f"{loop.gate.url}/api/harness/{proposal_id}/veto",
                        headers={"Authorization": "Bearer fwr_forged"})
    assert nobody.status_code == 401
    too_long = client.post(f"/harness/{proposal_id}/veto", data={"csrf": csrf, "note": "x" * 2000})
    assert too_long.status_code == 409 and "keep it under 1000" in too_long.text

    # someone with access to the topic publishes a veto without the gate's signature
    state = loop.service.state
    proposal = state.proposals[proposal_id]
    forged = HarnessVetoed(source="gate/1", proposal_id=proposal_id, reviewer="alice",
                           correlation_id=proposal.correlation_id, key_id="0" * 16,
                           signature="ab" * 64)
    with TypedProducer(loop.bootstrap) as producer:
        producer.send(loop.harness, forged).get(timeout=10)
    assert loop.evolver_reads_the_topic() == 0
    assert dict(loop.service.vetoes.refused) == {"unknown_key": 1}
    wait_for(lambda: loop.gate.gate.harness.untrusted_vetoes == 1,
             what="the gate reading the forged veto")
    (row,) = loop.gate.gate.harness.pending()
    assert row.vetoed_by is None  # the page still offers the veto

    loop.clock[0] = utc_now() + timedelta(seconds=WINDOW_S + 1)
    assert loop.runner.tick() == 1  # the forged veto stopped nothing
    assert loop.harness_events()[-1].type == "harness.promoted"
