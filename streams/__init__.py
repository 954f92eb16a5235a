"""Kafka plumbing: codec, typed producer/consumer, faust factory, dead letters, sinks, local broker."""
