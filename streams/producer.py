"""A typed, idempotent Kafka producer that only sends valid events of a topic's union.

It is built on kafka-python, the slower of the two clients (bench/bus.py: ~20k vs ~47k 1 KiB
events/s raw), because idempotence is not negotiable and aiokafka's idempotent producer does not
work against the local broker: with `enable_idempotence=True` its first send fails with
`UnknownError` from Tansu (checked with aiokafka 0.14.0), while kafka-python's idempotent producer
runs. The raw aiokafka figure the bench compares against is a non-idempotent producer.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from kafka import KafkaProducer
from kafka.producer.future import FutureRecordMetadata
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from schemas.envelope import Event, is_validated
from schemas.registry import InvalidEvent, TypeNotAllowed
from schemas.topics import Topic
from streams.codec import OversizeMessage, encode, headers_for, validate
from streams.lifecycle import Closing
from streams.settings import DEFAULT_MAX_MESSAGE_BYTES

__all__ = ["PRODUCER_DEFAULTS", "TypedProducer"]

logger = logging.getLogger(__name__)

#: kafka-python settings for every producer of the loop.
PRODUCER_DEFAULTS: dict[str, Any] = {
    # Idempotence + acks=all: retries never duplicate or reorder within a partition.
    "enable_idempotence": True,
    "acks": "all",
    # 5 ms lets batches fill under load (the measured ~47k msg/s needs batching) while adding
    # at most 5 ms of latency to a lone event on the rollout's request/response path.
    "linger_ms": 5,
    # 64 KiB batches hold ~60 typical 1 KiB events; bigger gains little on loopback.
    "batch_size": 64 * 1024,
    # Whole-episode events can be several hundred KiB; this cap matches max_message_bytes.
    "max_request_size": DEFAULT_MAX_MESSAGE_BYTES + 64 * 1024,
}
#: flush()/close() wait at most this long; acks=all on a healthy cluster takes milliseconds.
FLUSH_TIMEOUT_S = 30.0


class TypedProducer(Closing):
    """Sends events to registered topics: type checked against the topic, keyed by the
    topic's key field, with type/version/id headers. Events that skipped validation
    (`schemas.envelope.is_validated`) are re-validated as a reader would."""

    def __init__(self, bootstrap: str, client_id: str = "flywheel", *,
                 max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, **kafka_kwargs: Any) -> None:
        config = {**PRODUCER_DEFAULTS, **kafka_kwargs}
        config.setdefault("max_request_size", max_message_bytes + 64 * 1024)
        self.max_message_bytes = max_message_bytes
        self._producer = KafkaProducer(bootstrap_servers=bootstrap, client_id=client_id, **config)
        #: Events sent that had to be re-validated (built with model_construct and the like).
        self.revalidated = 0

    @staticmethod
    def _revalidate(topic: Topic, event: Event) -> Event:
        try:  # model_construct skips validation: check the event as a reader would
            data = event.model_dump(mode="json", warnings=False)
        except PydanticSerializationError as error:
            raise InvalidEvent(f"invalid {event.type} event: it cannot be serialised ({error})"
                               ) from None
        return validate(data, topic)

    def send(self, topic: Topic, event: Event) -> FutureRecordMetadata:
        """Validates `event` for `topic` and sends it; the future resolves when acked."""
        if event.type not in topic.models:
            raise TypeNotAllowed(f"event type {event.type!r} is not carried by topic "
                                 f"{topic.name!r} (it carries {', '.join(sorted(topic.type_names))})",
                                 "type")
        if is_validated(event):
            # Validation built it and everything in it, and it is frozen: encoding is enough.
            return self._send_bytes(topic, event, encode(event))
        self.revalidated += 1
        if event.schema_version == type(event).current_version:
            # Built without validation (model_construct, model_copy(update=...)): validate the
            # exact bytes that go on the wire, as a reader will, with the event's own model.
            try:
                value = encode(event)
                type(event).model_validate_json(value)
            except (PydanticSerializationError, ValidationError):
                pass  # the slow path below raises the one-sentence error
            else:
                return self._send_bytes(topic, event, value)
        return self._send_valid(topic, self._revalidate(topic, event))

    def send_dict(self, topic: Topic, data: dict[str, Any]) -> FutureRecordMetadata:
        """Validates a raw payload (upcasting old versions) and sends it as its event."""
        return self._send_valid(topic, validate(data, topic))

    def _send_valid(self, topic: Topic, event: Event) -> FutureRecordMetadata:
        return self._send_bytes(topic, event, encode(event))

    def _send_bytes(self, topic: Topic, event: Event, value: bytes) -> FutureRecordMetadata:
        if len(value) > self.max_message_bytes:
            raise OversizeMessage(f"{event.type} event {event.event_id} is {len(value)} bytes, "
                                  f"over the {self.max_message_bytes}-byte limit; put large "
                                  f"payloads in the blob store and send their sha256")
        return self._producer.send(topic.name, value=value, key=topic.key_of(event),
                                   headers=headers_for(event))

    def send_raw(self, topic_name: str, value: bytes | None, key: bytes | None = None,
                 headers: Sequence[tuple[str, bytes]] = ()) -> FutureRecordMetadata:
        """Sends bytes unchecked: for dead letters, archive replay and tests only."""
        return self._producer.send(topic_name, value=value, key=key, headers=list(headers))

    def flush(self, timeout_s: float = FLUSH_TIMEOUT_S) -> None:
        self._producer.flush(timeout=timeout_s)

    def close(self, timeout_s: float = FLUSH_TIMEOUT_S) -> None:
        self._producer.close(timeout=timeout_s)
