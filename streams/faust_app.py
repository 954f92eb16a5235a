"""Faust app factory tuned for the local broker, raw typed topics, a dead-lettering decoder, and
the smallest service built from them (`run_relay`).

faust hard-codes aiokafka's `fetch_max_wait_ms=1500` for its worker consumer, and the local
broker holds an empty fetch that long even when records arrive meanwhile, so each hop of the
loop waited up to 1.5 s (measured: a 1.8 s task -> verdict -> task cycle). `make_app` builds a
`QuickFetchApp`, whose transport (faust's own aiokafka driver, subclassed) caps that wait at
`FETCH_MAX_WAIT_MS`; nothing global is patched, so other aiokafka clients in the process keep
their own settings."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import faust
from faust.transport.drivers import aiokafka as faust_aiokafka

from schemas.envelope import Event
from schemas.registry import SchemaError
from schemas.topics import Topic
from streams.broker import ensure_broker
from streams.codec import decode
from streams.consumer import ErrorHandler, RawRecord, dead_letter_all
from streams.dlq import DeadLetterRouter
from streams.settings import BusSettings

__all__ = ["FAUST_DEFAULTS", "FETCH_MAX_WAIT_MS", "QuickFetchApp", "decoded_events", "make_app",
           "run_relay", "typed_topic"]

logger = logging.getLogger(__name__)

#: Settings every faust app of the loop gets (each can be overridden by make_app's kwargs).
FAUST_DEFAULTS: dict[str, Any] = {
    # Tansu cannot do aiokafka InitProducerId, so exactly_once cannot even start (DESIGN.md);
    # at-least-once plus idempotent sinks gives exactly-once effects instead.
    "processing_guarantee": "at_least_once",
    # Tansu's first JoinGroup waits session_timeout/2: 6 s keeps startup near 3 s.
    "broker_session_timeout": 6.0,
    "broker_heartbeat_interval": 2.0,
    # Topics are created explicitly (streams.admin); Tansu would auto-create 4 partitions.
    "topic_allow_declare": False,
    # The leader topic would be one more auto-declared topic; our agents need no leader.
    "topic_disable_leader": True,
    # No RocksDB, no changelog recovery: table recovery relies on end offsets, which Tansu
    # reports wrongly, so nothing may depend on it.
    "store": "memory://",
    "table_standby_replicas": 0,
    # Services expose nothing over HTTP; a web server per agent would only fight over ports.
    "web_enabled": False,
    "consumer_auto_offset_reset": "earliest",
    "autodiscover": False,
}


#: The longest an empty fetch of a faust worker is held (faust's own is 1,500 ms): short enough
#: for a quick hop, long enough to keep idle polling cheap.
FETCH_MAX_WAIT_MS = 50


class _QuickFetchConsumerThread(faust_aiokafka.AIOKafkaConsumerThread):
    """faust's consumer thread, its worker consumer holding empty fetches FETCH_MAX_WAIT_MS."""

    def _create_worker_consumer(self, transport: Any) -> Any:
        consumer = super()._create_worker_consumer(transport)
        # Read once, when the consumer starts its fetcher; faust passes no setting for it.
        consumer._fetch_max_wait_ms = min(consumer._fetch_max_wait_ms, FETCH_MAX_WAIT_MS)
        return consumer


class _QuickFetchConsumer(faust_aiokafka.Consumer):
    def _new_consumer_thread(self) -> _QuickFetchConsumerThread:
        return _QuickFetchConsumerThread(self, loop=self.loop, beacon=self.beacon)


class _QuickFetchTransport(faust_aiokafka.Transport):
    Consumer = _QuickFetchConsumer


class QuickFetchApp(faust.App):
    """A faust App whose consumer transport holds an empty fetch at most FETCH_MAX_WAIT_MS."""

    def _new_transport(self) -> _QuickFetchTransport:
        return _QuickFetchTransport(self.conf.broker_consumer, self)


def make_app(app_id: str, settings: BusSettings | None = None, **overrides: Any) -> faust.App:
    """A faust App on KAFKA_BOOTSTRAP_SERVERS or the local broker (started if needed and left
    running in the background: `flywheel broker stop` ends it)."""
    settings = settings or BusSettings()
    bootstrap, started = ensure_broker(settings)
    if started is not None:
        logger.info("started the local broker %s for faust app %s", bootstrap, app_id)
    datadir = Path(settings.data_dir) / "faust" / app_id
    datadir.parent.mkdir(parents=True, exist_ok=True)  # faust makes only the last level
    brokers = ";".join(f"kafka://{server.strip()}" for server in bootstrap.split(","))
    config: dict[str, Any] = {
        **FAUST_DEFAULTS, "broker": brokers,
        "datadir": str(datadir),
        "producer_max_request_size": settings.max_message_bytes + 64 * 1024,
        **overrides,
    }
    return QuickFetchApp(app_id, **config)


def typed_topic(app: faust.App, topic: Topic) -> faust.TopicT:
    """The faust topic for a registered topic, carrying raw bytes (decode with the codec)."""
    return app.topic(topic.name, key_type=bytes, value_type=bytes, key_serializer="raw",
                     value_serializer="raw", partitions=topic.partitions,
                     compacting=topic.cleanup_policy == "compact")


async def decoded_events(stream: faust.StreamT, topic: Topic, dead_letters: DeadLetterRouter, *,
                         on_error: ErrorHandler = dead_letter_all,
                         max_bytes: int | None = None) -> AsyncIterator[Event]:
    """Valid events of a raw faust stream; what fails goes to `<topic>.dlq` (acknowledged
    before faust commits past it) or raises, as `on_error` decides."""
    limit = max_bytes or BusSettings().max_message_bytes
    async for item in stream.events():
        message = item.message
        value: bytes | None = item.value
        try:
            event = decode(value, topic, limit, key=message.key)
        except SchemaError as error:
            raw = RawRecord(topic=message.topic, partition=message.partition,
                            offset=message.offset, key=message.key, value=value,
                            headers=tuple(message.headers or ()),
                            timestamp_ms=int(message.timestamp * 1000))
            action = on_error(raw, error)
            if action == "raise":
                raise
            dead_letters.route(message.topic, message.partition, message.offset, message.key,
                               value, error, raw.headers, consumer=stream.app.conf.id)
            dead_letters.flush()  # rare path: make it durable before the offset is committed
            continue
        yield event


def run_relay(bootstrap: str, source: Topic, sink: Topic, data_dir: str | Path, app_id: str) -> None:
    """Runs (until stopped) a faust worker whose one agent decodes every event of `source`,
    dead-letters bad ones to `source`'s dead-letter topic and re-produces good ones to `sink`:
    the smallest complete faust service, which the bus bench and the faust tests run."""
    import sys

    from faust import Worker

    from streams.codec import encode

    app = make_app(app_id, BusSettings(bootstrap_servers=bootstrap, data_dir=Path(data_dir)))
    in_topic, out_topic = typed_topic(app, source), typed_topic(app, sink)
    router = DeadLetterRouter(bootstrap)

    @app.agent(in_topic)
    async def relay(stream: faust.StreamT) -> None:
        async for event in decoded_events(stream, source, router):
            await out_topic.send(key=sink.key_of(event), value=encode(event))

    sys.argv = sys.argv[:1]  # faust's command line reads argv; the caller's arguments are not its
    Worker(app, loglevel="warning", quiet=True).execute_from_commandline()
