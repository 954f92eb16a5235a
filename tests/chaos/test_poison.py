"""The poison corpus against every consumer of the loop (the device runner and the archiver, on
the same topic at once): each bad record lands in the dead-letter topic exactly once per
consumer, with its error, source offset and headers; valid records flow on; no secret leaks."""

from __future__ import annotations

import hashlib
import io
import logging
import threading
import time
import uuid
from pathlib import Path

import pyarrow.compute as pc
import pytest
from kafka import KafkaProducer

from devices.sim import SimPhone
from schemas.episodes import ActionRequested
from services.archiver.service import build_archiver
from services.archiver.settings import ArchiverSettings
from services.archiver.store import ArchiveStore
from services.device_runner.decide import RunnerMemory, response_id
from services.device_runner.farm import partition_for
from services.device_runner.loop import run_device_runner
from services.device_runner.settings import DeviceRunnerSettings
from streams.codec import encode, headers_for
from streams.dlq import read_dead_letters, safe_preview
from streams.redact import install_log_redaction
from tests.chaos.conftest import ChaosFigures
from tests.chaos.corpus import CANARY, OVERSIZE_BYTES, poison_corpus
from tests.services.device_runner.helpers import request

pytestmark = pytest.mark.integration

#: Guards against hangs only; not a speed assertion.
WAIT_S = 90.0
EPISODES, STEPS = 3, 3


def _send_all(bootstrap: str, topic: str, valid: list[ActionRequested], corpus: list) -> dict:
    """Valid actions interleaved with the corpus; returns {offset coordinates: poison kind}."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all",
                             max_request_size=4 * OVERSIZE_BYTES)
    where: dict[tuple[int, int], str] = {}
    # The runner of sim-0 reads only the partition its actions are keyed to (the device farm),
    # so the poison goes there whatever its key says: an attacker writing to that partition.
    runner_part = partition_for("sim-0", len(producer.partitions_for(topic)))
    try:
        pending = list(corpus)
        for event in valid:
            producer.send(topic, value=encode(event), key=event.device_id.encode(),
                          headers=headers_for(event)).get(30)
            if pending:
                bad = pending.pop(0)
                meta = producer.send(topic, value=bad.value, key=bad.key, partition=runner_part,
                                     headers=list(bad.headers)).get(30)
                where[(meta.partition, meta.offset)] = bad.kind
        for bad in pending:
            meta = producer.send(topic, value=bad.value, key=bad.key, partition=runner_part,
                                 headers=list(bad.headers)).get(30)
            where[(meta.partition, meta.offset)] = bad.kind
    finally:
        producer.close()
    return where


def test_poison_corpus_is_dead_lettered_once_per_consumer_while_valid_records_flow(
        bootstrap: str, fresh_topic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        chaos_figures: ChaosFigures) -> None:
    monkeypatch.setenv("FLYWHEEL_DATA_DIR", str(tmp_path))
    log = io.StringIO()
    handler = logging.StreamHandler(log)
    logging.getLogger().addHandler(handler)
    install_log_redaction()
    actions, observations = fresh_topic("flywheel.actions"), fresh_topic("flywheel.observations")
    valid = [request("sim-0", f"ep-{e}", s) for e in range(EPISODES) for s in range(STEPS)]
    corpus = poison_corpus(valid[1])
    where = _send_all(bootstrap, actions.name, valid, corpus)
    assert len(where) == len(corpus)

    runner_group, archiver_group = f"runner-{uuid.uuid4().hex[:8]}", f"arch-{uuid.uuid4().hex[:8]}"
    store = ArchiveStore(tmp_path / "archive")
    settings = ArchiverSettings(archive_dir=store.root, group_id=archiver_group,
                                flush_interval_s=0.2)
    archiver, source = build_archiver(bootstrap, settings, store.root,
                                      topics=[actions, observations], data_dir=tmp_path)
    stop = threading.Event()
    errors: list[BaseException] = []
    memory = RunnerMemory()

    def runner() -> None:
        try:
            run_device_runner(DeviceRunnerSettings(device_id="sim-0", group_id=runner_group,
                                                   start_from="earliest", poll_timeout_ms=100),
                              SimPhone("sim-0"), stop, bootstrap=bootstrap, actions=actions,
                              observations=observations, memory=memory)
        except BaseException as error:  # noqa: BLE001 - re-raised below
            errors.append(error)

    thread = threading.Thread(target=runner, daemon=True)
    thread.start()
    answers = {response_id(a) for a in valid}
    wanted = {a.event_id for a in valid} | answers
    deadline = time.monotonic() + WAIT_S
    try:
        def archived_all() -> bool:
            return wanted <= archiver.seen and sum(
                1 for i in archiver.seen if i.startswith("dlq-")) >= len(corpus)

        archiver.run(lambda: archived_all() or time.monotonic() > deadline or bool(errors))
    finally:
        stop.set()
        thread.join(30)
        source.close()
        logging.getLogger().removeHandler(handler)
    assert not errors, errors
    assert wanted <= archiver.seen, "valid actions or their observations did not flow"
    assert memory.executed == len(valid)

    letters = read_dead_letters(bootstrap, actions.name, limit=500)
    figures = {}
    runner_group += ".sim-0"  # the runner of device D joins '<prefix>.D'
    for group in (runner_group, archiver_group):
        mine = [d for d in letters if d.consumer == group]
        coordinates = [(d.source_partition, d.source_offset) for d in mine]
        figures[group] = len(mine)
        assert sorted(coordinates) == sorted(where), f"{group}: not one letter per bad record"
        for letter in mine:
            kind = where[(letter.source_partition, letter.source_offset)]
            assert letter.source_topic == actions.name and letter.error, kind
            assert CANARY not in letter.error and "\n" not in letter.error
            for name, value in letter.headers:
                assert CANARY.encode() not in value, f"{kind}: header {name} leaks the canary"
            assert CANARY not in safe_preview(letter.value)
            if kind == "missing field":
                assert "field 'episode_id'" in letter.error
            if kind == "deep nesting":
                assert "deeper than" in letter.error
            if kind == "oversize":
                digest = letter.value_sha256
                assert letter.value == b"" and digest is not None
                blob = tmp_path / "blobs" / digest[:2] / digest
                assert hashlib.sha256(blob.read_bytes()).hexdigest() == digest
            if kind == "secret in headers":
                kept = letter.source_headers
                assert b"***" in kept["authorization"] and kept["error"] == b"forged"
                assert letter.error != "forged"
            if kind == "spoofed headers":
                assert letter.source_headers["type"] == b"action.requested"

    # The archive: every valid action and answer once, and each consumer's dead letter of each bad
    # record once (two consumers refused each: two rows, each naming its consumer).
    table = store.read()
    ids = table["event_id"].to_pylist()
    assert len(ids) == len(set(ids))
    dead = table.filter(pc.equal(table["topic"], actions.dlq))
    assert dead.num_rows == 2 * len(corpus)
    for column in ("error", "source", "correlation_id"):
        assert not any(CANARY in (v or "") for v in table[column].to_pylist()), column
    assert CANARY not in log.getvalue(), "a log line leaks the canary"
    assert (tmp_path / "quarantine").exists() is False
    chaos_figures.record("device runner (poison)", acknowledged=len(valid), lost=0,
                         duplicated=0, **{"dead-lettered": f"{figures[runner_group]}/"
                                                           f"{len(corpus)}"},
                         note=f"{len(corpus)} kinds incl. deep nesting, 2 MiB oversize")
    chaos_figures.record("archiver (poison)", acknowledged=len(wanted), lost=0,
                         duplicated=len(ids) - len(set(ids)),
                         **{"dead-lettered": f"{figures[archiver_group]}/{len(corpus)}"},
                         note=f"archive holds {dead.num_rows} dead-letter rows")
