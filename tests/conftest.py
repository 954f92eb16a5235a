"""Shared fixtures: a real Kafka-protocol broker for the session and fresh topics per test."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from schemas.topics import TOPICS, Topic
from streams.admin import create_topics
from streams.broker import LocalBroker
from streams.settings import BusSettings

__all__ = ["bootstrap", "fresh_topic"]

logger = logging.getLogger(__name__)


@pytest.fixture(scope="session")
def bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """KAFKA_BOOTSTRAP_SERVERS when set, else a local Tansu broker on a free port for the
    session (stopped at the end)."""
    configured = BusSettings().bootstrap_or_none()
    if configured is not None:
        yield configured
        return
    data_dir: Path = tmp_path_factory.mktemp("broker")
    with LocalBroker.on_free_port(data_dir) as broker:
        logger.info("test broker %s (log %s)", broker.bootstrap, broker.log_path)
        yield broker.bootstrap


@pytest.fixture
def fresh_topic(bootstrap: str) -> Callable[[str], Topic]:
    """A factory: `fresh_topic("flywheel.verdicts")` creates a uniquely named copy of that
    registered topic (same partitions, policy and event types) plus its DLQ, and returns it."""

    def make(name: str = "flywheel.episodes") -> Topic:
        topic = TOPICS[name].renamed(f"t-{uuid.uuid4().hex[:12]}")
        create_topics(bootstrap, [topic], with_dlq=True)
        return topic

    return make
