"""Runs a FoldingService as a faust-streaming agent (one worker process per service).

The agent reads the service's input topics as raw bytes, takes batches with
`stream.take_events()` (so offsets and topics stay known for lineage), decodes them with the
codec (bad bytes go to `<topic>.dlq`, never crash the agent) and hands each batch to the
`Runner` in a worker thread; an event the service fails on goes to the dead letters too,
and a failure to fold ends the process (exit 70) for its supervisor to restart. A faust
timer calls the service's `tick`. At-least-once: faust commits offsets of acknowledged
events; the service's event store and derived ids make redeliveries no-ops. No faust tables: state lives in the event store.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path

from schemas.registry import SchemaError
from services.broker_watch import watch_broker
from services.dataflow.runner import FoldingService, Runner
from services.dataflow.store import EventStore, Stored
from streams.codec import decode
from streams.dlq import DeadLetterRouter
from streams.faust_app import make_app
from streams.producer import TypedProducer
from streams.settings import BusSettings, load_bus_settings

__all__ = ["BATCH_MAX", "BATCH_WITHIN_S", "TICK_S", "serve", "store_path"]

logger = logging.getLogger(__name__)

#: Events per batch: enough to amortise one flush and one SQLite transaction.
BATCH_MAX = 200
#: …or whatever arrived within this long (keeps the loop's latency low at low volume).
BATCH_WITHIN_S = 0.05
#: How often `tick` runs (top-ups of the generator's queue).
TICK_S = 1.0
#: Exit status of a service that failed on an event or a timer (EX_SOFTWARE).
CRASH_EXIT = 70


def _die(name: str, what: str) -> None:
    """Ends the process when folding `what` fails (a failing decide is dead-lettered
    instead): the state in memory may be half-folded, and a crashed faust agent would leave
    the worker running with nothing consuming, a silent stall. Exiting is as safe as a
    kill -9 (outputs are flushed before inputs are stored), and the supervisor restarts the
    service from its store."""
    logger.exception("%s failed on %s and stops (exit %d); it resumes from its event store "
                     "when restarted", name, what, CRASH_EXIT)
    for handler in logging.getLogger().handlers:
        handler.flush()
    sys.stderr.flush()
    os._exit(CRASH_EXIT)


def store_path(data_dir: str | Path, name: str) -> Path:
    """Where service `name` keeps its event store: `<data dir>/services/<name>.sqlite`."""
    return Path(data_dir) / "services" / f"{name}.sqlite"


def serve(build: Callable[[BusSettings, str], FoldingService], name: str, *,
          group_id: str | None = None) -> None:
    """Builds the service, restores it from its store and runs it as a faust worker until
    SIGTERM/Ctrl-C. `build(bus_settings, bootstrap)` makes the service."""
    from faust import Worker

    for noisy in ("kafka", "aiokafka"):  # connection chatter drowns the service's own lines
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        bus = load_bus_settings()
        app = make_app(group_id or f"flywheel-{name}", bus)
        bootstrap = ",".join(str(url).removeprefix("kafka://") for url in app.conf.broker)
        service = build(bus, bootstrap)  # loads the service's own settings
        store = EventStore(store_path(bus.data_dir, name))
    except ValueError as error:  # SettingsError and the services' own bad-config sentences
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    except OSError as error:  # the data dir cannot hold the service's state
        print(f"error: {name} cannot keep its state under {bus.data_dir} ({error.strerror or error}); "
              f"set FLYWHEEL_DATA_DIR to a folder you can write", file=sys.stderr)
        raise SystemExit(2) from None
    watch_broker(bootstrap, f"the {name}", exit_now=True)
    producer = TypedProducer(bootstrap, client_id=name)
    runner = Runner(service, store, producer)
    runner.restore()
    dead_letters = DeadLetterRouter(producer)
    topics = {t.name: t for t in service.inputs}
    channel = app.topic(*topics, key_type=bytes, value_type=bytes, key_serializer="raw",
                        value_serializer="raw")
    limit = bus.max_message_bytes

    def dead_letter(item, error: Exception) -> None:  # type: ignore[no-untyped-def]
        message = item.message
        dead_letters.route(message.topic, message.partition, message.offset, message.key,
                           item.value, error, tuple(message.headers or ()),
                           consumer=app.conf.id)

    batch: dict[str, object] = {}  # event id -> the faust event it was decoded from

    def failed(stored: Stored, error: Exception) -> None:
        """An event this service fails on (a bug, or an input it cannot take) goes to the
        dead letters with the error; the service goes on with the next one."""
        logger.exception("%s failed on %s event %s from %s; it goes to %s.dlq", name,
                         stored.event.type, stored.event.event_id, stored.topic, stored.topic)
        dead_letter(batch[stored.event.event_id], error)

    @app.agent(channel, name=f"{name}-agent")
    async def consume(stream):  # type: ignore[no-untyped-def]
        loop = asyncio.get_running_loop()
        async for events in stream.take_events(BATCH_MAX, within=BATCH_WITHIN_S):
            batch.clear()
            items = []
            for item in events:
                message = item.message
                try:
                    event = decode(item.value, topics[message.topic], limit, key=message.key)
                except SchemaError as error:
                    dead_letter(item, error)
                    dead_letters.flush()  # durable before faust commits past it
                    continue
                items.append(Stored(event, message.topic, message.partition, message.offset, item.value))
                batch[event.event_id] = item
            if items:
                try:
                    await loop.run_in_executor(None, runner.process, items, failed)
                except Exception:  # noqa: BLE001 - see _die
                    _die(name, "a batch")
                dead_letters.flush()  # durable before faust commits past them

    @app.timer(TICK_S)
    async def tick() -> None:
        try:
            await asyncio.get_running_loop().run_in_executor(None, runner.tick)
        except Exception:  # noqa: BLE001 - see _die
            _die(name, "its timer")

    sys.argv = sys.argv[:1]
    logger.info("%s serving %s", name, ", ".join(topics))
    Worker(app, loglevel="warning", quiet=True).execute_from_commandline()
