"""A live gate for the web tests: real broker, fresh topics, uvicorn on a free port."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from devices.blobs import BlobStore
from schemas.topics import Topic
from services.gate.launch import GateHandle, start_gate
from services.gate.samples import Sample, run_sample
from services.gate.settings import GateSettings
from tests.services.gate.helpers import fresh_gate_topics, publish, wait_for


@dataclass
class LiveGate:
    handle: GateHandle
    samples: list[Sample]
    tokens: dict[str, str]

    @property
    def url(self) -> str:
        return self.handle.url


@pytest.fixture
def live_gate(bootstrap: str, fresh_topic: Callable[[str], Topic], tmp_path: Path
              ) -> Iterator[LiveGate]:
    """A gate with three items: a passing oracle run (with a stored screenshot), a failing
    30-step random run, and a correction written by 'carol'."""
    topics = fresh_gate_topics(fresh_topic)
    blobs = BlobStore(tmp_path / "blobs")
    samples = [
        run_sample("note_phone_of_relation", 0, blobs=blobs, review_id="rv-a-pass"),
        run_sample("note_phone_of_relation", 1, policy="random", steps=30, tier="hard", review_id="rv-b-fail",
                   reasons=("failed",)),
        run_sample("text_relation", 0, review_id="rv-c-correction", submitted_by="carol",
                   reasons=("correction",)),
    ]
    publish(bootstrap, topics, [e for s in samples for e in s.events])
    handle = start_gate(bootstrap, tmp_path, GateSettings(port=0), topics=topics,
                        create_key=True, local_reviewer="alice")
    try:
        tokens = {"alice": handle.local_token or "",
                  "carol": handle.gate.tokens.issue("carol")}
        wait_for(lambda: len(handle.gate.queue.items) == 3
                 and len(handle.gate.queue.verdicts) == 3, what="the gate's queue")
        yield LiveGate(handle, samples, tokens)
    finally:
        handle.stop()
