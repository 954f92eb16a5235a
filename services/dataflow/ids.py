"""Deterministic ids: an event re-decided after a crash gets the id it had the first time."""

from __future__ import annotations

import uuid

__all__ = ["derived_id"]

#: Fixed namespace for uuid5: ids are stable across processes, machines and restarts.
_NAMESPACE = uuid.UUID("6f0f3c1e-51e8-4a53-9d1c-6c1f2b8a9e47")


def derived_id(*parts: object) -> str:
    """A 32-hex id fixed by `parts` (e.g. the causing event id and a label).

    Services at-least-once re-run `decide` on redelivered events; deriving each output's
    `event_id` from its cause makes the repeat an exact duplicate that every sink drops.
    """
    return uuid.uuid5(_NAMESPACE, "\x1f".join(str(p) for p in parts)).hex
