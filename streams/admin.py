"""Explicit, idempotent topic creation (with dead-letter topics) and topic listing."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from kafka import KafkaAdminClient
from kafka.errors import KafkaError, for_code

from schemas.topics import Topic

__all__ = ["DLQ_PARTITIONS", "AdminError", "admin_client", "commit_group_offsets", "create_topics",
           "end_offsets", "list_topics"]

logger = logging.getLogger(__name__)

#: Dead letters are rare and read by people in order; one partition keeps them in order.
DLQ_PARTITIONS = 1
#: Dead letters are kept, never compacted: each one is a distinct failure to look at.
DLQ_CLEANUP_POLICY = "delete"
#: Kafka's TOPIC_ALREADY_EXISTS error code: creating an existing topic is success here.
TOPIC_ALREADY_EXISTS = 36
#: The docker-compose cluster runs 3 brokers with RF=3; a smaller cluster gets RF = its size.
MAX_REPLICATION_FACTOR = 3
#: Topic creation is a metadata write; 30 s covers a loaded 3-broker cluster.
CREATE_TIMEOUT_MS = 30_000


class AdminError(RuntimeError):
    """A topic could not be created or listed (one sentence)."""


def admin_client(bootstrap: str, client_id: str = "flywheel-admin") -> KafkaAdminClient:
    """A kafka-python admin client, with a one-sentence error if the broker does not answer."""
    try:
        return KafkaAdminClient(bootstrap_servers=bootstrap, client_id=client_id)
    except KafkaError as error:
        raise AdminError(f"cannot reach Kafka at {bootstrap} ({type(error).__name__}); start "
                         f"it with `flywheel broker start` or fix KAFKA_BOOTSTRAP_SERVERS") from None


def _specs(topics: Iterable[Topic], with_dlq: bool, replication: int) -> dict[str, dict[str, object]]:
    specs: dict[str, dict[str, object]] = {}
    for t in topics:
        specs[t.name] = {"num_partitions": t.partitions, "replication_factor": replication,
                         "configs": {"cleanup.policy": t.cleanup_policy}}
        if with_dlq:
            specs[t.dlq] = {"num_partitions": DLQ_PARTITIONS, "replication_factor": replication,
                            "configs": {"cleanup.policy": DLQ_CLEANUP_POLICY}}
    return specs


def create_topics(bootstrap: str, topics: Iterable[Topic], with_dlq: bool = True,
                  replication_factor: int | None = None) -> list[str]:
    """Creates each topic (and its `<name>.dlq`) with its partitions and cleanup.policy.

    Idempotent: a topic that already exists is left as it is. Returns every topic name
    ensured, in order (new and existing alike).
    """
    admin = admin_client(bootstrap)
    try:
        if replication_factor is None:
            brokers = len(admin.describe_cluster().get("brokers", [])) or 1
            replication_factor = min(MAX_REPLICATION_FACTOR, brokers)
        specs = _specs(topics, with_dlq, replication_factor)
        if not specs:
            return []
        existing = set(admin.list_topics())
        wanted = {name: spec for name, spec in specs.items() if name not in existing}
        if wanted:
            result = admin.create_topics(wanted, timeout_ms=CREATE_TIMEOUT_MS, raise_errors=False)
            for entry in result.get("topics", []):
                code = entry.get("error_code", 0)
                if code not in (0, TOPIC_ALREADY_EXISTS):
                    error = for_code(code)
                    raise AdminError(f"cannot create topic {entry.get('name')!r}: "
                                     f"{error.__name__} ({entry.get('error_message') or code}); "
                                     f"check the broker log")
            logger.info("created topics: %s", ", ".join(sorted(wanted)))
        return list(specs)
    except KafkaError as error:
        raise AdminError(f"topic creation on {bootstrap} failed ({type(error).__name__}: "
                         f"{error}); check that the broker is up") from None
    finally:
        admin.close()


def list_topics(bootstrap: str) -> list[str]:
    """Every topic name on the cluster, sorted (internal `__` topics left out)."""
    admin = admin_client(bootstrap)
    try:
        return sorted(name for name in admin.list_topics() if not name.startswith("__"))
    except KafkaError as error:
        raise AdminError(f"listing topics on {bootstrap} failed ({type(error).__name__}); "
                         f"check that the broker is up") from None
    finally:
        admin.close()


def end_offsets(bootstrap: str, topics: Iterable[str]) -> dict[tuple[str, int], int]:
    """The next offset of every partition of `topics` that exist on the cluster."""
    from kafka import KafkaConsumer, TopicPartition

    try:
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, client_id="flywheel-admin-offsets")
    except KafkaError as error:
        raise AdminError(f"cannot reach Kafka at {bootstrap} ({type(error).__name__}); start "
                         f"it with `flywheel broker start` or fix KAFKA_BOOTSTRAP_SERVERS") from None
    try:
        partitions = [TopicPartition(name, p) for name in topics
                      for p in sorted(consumer.partitions_for_topic(name) or ())]
        return {(tp.topic, tp.partition): offset for tp, offset in consumer.end_offsets(partitions).items()}
    except KafkaError as error:
        raise AdminError(f"reading end offsets on {bootstrap} failed ({type(error).__name__}); "
                         f"check that the broker is up") from None
    finally:
        consumer.close()


def commit_group_offsets(bootstrap: str, group_id: str,
                         offsets: dict[tuple[str, int], int]) -> None:
    """Commits `offsets` ((topic, partition) → next offset) for a consumer group that has no
    active member (the archive replay puts the archiver's position after what it re-published,
    so the archiver does not read it all back)."""
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    if not offsets:
        return
    try:
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group_id,
                                 enable_auto_commit=False, client_id="flywheel-offsets")
    except KafkaError as error:
        raise AdminError(f"cannot reach Kafka at {bootstrap} ({type(error).__name__}) to set "
                         f"group {group_id}'s offsets") from None
    try:
        parts = {TopicPartition(t, p): OffsetAndMetadata(o, "", -1)
                 for (t, p), o in offsets.items()}
        consumer.assign(list(parts))
        consumer.commit(parts)
    except KafkaError as error:
        raise AdminError(f"setting group {group_id}'s offsets failed ({type(error).__name__})"
                         ) from None
    finally:
        consumer.close(autocommit=False)
