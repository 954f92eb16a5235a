"""The device farm: which partition of the actions topic carries a device's actions.

Actions are keyed by device id, so the producer's partitioner (kafka-python's default:
murmur2 of the key, positive, modulo the partition count — the same as the Java client's)
puts every action of device D on one partition. A runner assigns itself exactly that partition
instead of joining a group that hands out partitions by count: N runners read N (or fewer)
partitions, none reads the whole topic, and there is no join delay during which actions could
be missed. Offsets are committed under the device's own group id, so two devices that hash to
the same partition keep separate positions (each skips the other's actions).
"""

from __future__ import annotations

import logging
import time

from kafka import TopicPartition
from kafka.partitioner.default import murmur2

from schemas.topics import Topic
from streams.consumer import TypedBatchConsumer

__all__ = ["assign_device_partition", "partition_for"]

logger = logging.getLogger(__name__)

#: How long to wait for the topic's metadata before falling back to the registry's count.
METADATA_TIMEOUT_S = 10.0


def partition_for(device_id: str, partitions: int) -> int:
    """The partition the producer puts actions keyed `device_id` on."""
    if partitions < 1:
        raise ValueError(f"a topic needs at least one partition, not {partitions}")
    return (murmur2(device_id.encode()) & 0x7FFFFFFF) % partitions


def assign_device_partition(consumer: TypedBatchConsumer, topic: Topic, device_id: str) -> int:
    """Points `consumer` at the one partition of `topic` that carries `device_id`'s actions.

    The consumer was built subscribed (TypedBatchConsumer's way) but has not polled, so it has
    not joined a group yet: the subscription is dropped and the partition assigned by hand.
    """
    kafka = consumer.kafka
    count = _partition_count(consumer, topic)
    partition = partition_for(device_id, count)
    kafka.unsubscribe()
    kafka.assign([TopicPartition(topic.name, partition)])
    logger.info("device %s reads partition %d of %s (%d partitions)", device_id, partition,
                topic.name, count)
    return partition


def _partition_count(consumer: TypedBatchConsumer, topic: Topic) -> int:
    deadline = time.monotonic() + METADATA_TIMEOUT_S
    while time.monotonic() < deadline:
        found = consumer.kafka.partitions_for_topic(topic.name)
        if found:
            return len(found)
        time.sleep(0.1)
    logger.warning("no metadata for %s after %.0f s; using the registry's %d partitions",
                   topic.name, METADATA_TIMEOUT_S, topic.partitions)
    return topic.partitions
