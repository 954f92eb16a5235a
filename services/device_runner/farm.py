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
from collections.abc import Callable

from kafka.partitioner.default import murmur2

__all__ = ["device_partitions", "partition_for"]

logger = logging.getLogger(__name__)


def partition_for(device_id: str, partitions: int) -> int:
    """The partition the producer puts actions keyed `device_id` on."""
    if partitions < 1:
        raise ValueError(f"a topic needs at least one partition, not {partitions}")
    return (murmur2(device_id.encode()) & 0x7FFFFFFF) % partitions


def device_partitions(device_id: str) -> Callable[[str, int], list[int]]:
    """What a runner passes to TypedBatchConsumer(partitions=...): the one partition of each
    topic that carries `device_id`'s actions, assigned by hand (no group join)."""

    def pick(topic: str, count: int) -> list[int]:
        partition = partition_for(device_id, count)
        logger.info("device %s reads partition %d of %s (%d partitions)", device_id, partition,
                    topic, count)
        return [partition]

    return pick
