"""The device farm: which partitions of the actions topic carry a runner's devices' actions.

Actions are keyed by device id, so the producer's partitioner (kafka-python's default:
murmur2 of the key, positive, modulo the partition count — the same as the Java client's)
puts every action of device D on one partition. A runner assigns itself exactly that partition
instead of joining a group that hands out partitions by count: N runners read N (or fewer)
partitions, none reads the whole topic, and there is no join delay during which actions could
be missed. Offsets are committed under the runner's own group id, so two runners whose devices
hash to the same partition keep separate positions (each skips the other's actions). A runner
serving several phones reads the partitions of all of them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from kafka.partitioner.default import murmur2

__all__ = ["devices_partitions", "partition_for"]

logger = logging.getLogger(__name__)


def partition_for(device_id: str, partitions: int) -> int:
    """The partition the producer puts actions keyed `device_id` on."""
    if partitions < 1:
        raise ValueError(f"a topic needs at least one partition, not {partitions}")
    return (murmur2(device_id.encode()) & 0x7FFFFFFF) % partitions


def devices_partitions(device_ids: list[str]) -> Callable[[str, int], list[int]]:
    """What a runner passes to TypedBatchConsumer(partitions=...): the partitions of each topic
    that carry the actions of `device_ids`, assigned by hand (no group join)."""

    def pick(topic: str, count: int) -> list[int]:
        partitions = sorted({partition_for(device_id, count) for device_id in device_ids})
        logger.info("devices %s read partition(s) %s of %s (%d partitions)",
                    ", ".join(device_ids[:3]) + (" …" if len(device_ids) > 3 else ""),
                    partitions, topic, count)
        return partitions

    return pick
