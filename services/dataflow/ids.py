"""Deterministic ids: an event re-decided after a crash gets the id it had the first time."""

from __future__ import annotations

import uuid

__all__ = ["derived_id", "expand_device_ids", "phone_ids"]

#: Fixed namespace for uuid5: ids are stable across processes, machines and restarts.
_NAMESPACE = uuid.UUID("6f0f3c1e-51e8-4a53-9d1c-6c1f2b8a9e47")


def derived_id(*parts: object) -> str:
    """A 32-hex id fixed by `parts` (e.g. the causing event id and a label).

    Services at-least-once re-run `decide` on redelivered events; deriving each output's
    `event_id` from its cause makes the repeat an exact duplicate that every sink drops.
    """
    return uuid.uuid5(_NAMESPACE, "\x1f".join(str(p) for p in parts)).hex


def phone_ids(runner_id: str, phones: int) -> list[str]:
    """The device ids a device runner serves: its own id when it drives one phone, else
    '<runner_id>-0' … '<runner_id>-<phones-1>' (how a rollout names them: `runner_id*phones`)."""
    if phones < 1:
        raise ValueError(f"a runner serves at least one phone, not {phones}")
    return [runner_id] if phones == 1 else [f"{runner_id}-{k}" for k in range(phones)]


def expand_device_ids(entries: list[str]) -> list[str]:
    """Device ids from a list where 'ID*N' stands for the N phones of runner ID (phone_ids)."""
    out: list[str] = []
    for entry in entries:
        runner_id, star, count = entry.partition("*")
        if not star:
            out.append(entry)
        elif runner_id and count.isdigit() and 1 <= int(count) <= 1024:
            out.extend(phone_ids(runner_id, int(count)))
        else:
            raise ValueError(f"{entry!r} is not a runner's phones: write ID*N, a runner's device id "
                             f"and N from 1 to 1024")
    return out
