"""Reset on a stock phone: put back what Flywheel changed instead of clearing apps.

The first time Flywheel resets a phone it records the phone's own state (its contacts, its
enabled alarms, every managed setting) in a ledger file on the device. Every later reset
moves the phone back to that baseline — deleting the contacts episodes created, re-creating
baseline contacts an episode deleted, dismissing alarms episodes set, writing settings back
— and then loads the task's rows and settings on top. Because the ledger lives on the phone,
a restarted runner (or another machine) restores the same baseline.
"""

from __future__ import annotations

import json
import logging
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from devices.adb.client import AdbCall, CommandFailed
from devices.adb.stock import (
    delete_contact,
    dismiss_intent,
    insert_contact,
    read_clock,
    read_device_state,
    setting_write_commands,
)
from devices.adb.tools import alarm_intent
from devices.protocol import DeviceError

__all__ = ["LEDGER_VERSION", "Ledger", "StockRestore", "converge", "differences", "load_ledger",
           "save_ledger"]

logger = logging.getLogger(__name__)

#: Bumped when the ledger's shape changes; an unknown version is refused, not guessed at.
LEDGER_VERSION = 1

#: The contact fields a baseline copy keeps (what insert_contact can write back).
CONTACT_FIELDS = ("name", "phone", "email", "company", "starred")


@dataclass(frozen=True)
class StockRestore:
    """What a converge step did (counts for logs and tests)."""

    contacts_deleted: int
    contacts_created: int
    alarms_dismissed: int
    alarms_set: int
    settings_written: int


@dataclass
class Ledger:
    """The phone's own state before Flywheel: contacts by id, alarm times, settings."""

    contacts: dict[str, dict[str, Any]]
    alarms: list[str]
    settings: dict[str, Any]

    def to_json(self) -> bytes:
        return json.dumps({"version": LEDGER_VERSION, "contacts": self.contacts,
                           "alarms": self.alarms, "settings": self.settings},
                          sort_keys=True).encode()

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Ledger:
        contacts = {cid: {k: row.get(k) for k in CONTACT_FIELDS}
                    for cid, row in state["tables"]["contacts"]["contacts"].items()}
        alarms = sorted(a["time"] for a in state["tables"]["clock"]["alarms"].values())
        return cls(contacts, alarms, dict(state["settings"]))


def load_ledger(adb: AdbCall, path: str) -> Ledger | None:
    """The ledger on the phone, or None when Flywheel has not touched this phone yet."""
    read = adb.shell(["cat", path], idempotent=True)
    if read.exit_code != 0:
        if "No such file" in read.error_text + read.text:
            return None
        raise DeviceError(f"cannot read the reset ledger {path} on {adb.serial}: "
                          f"{(read.error_text or read.text).strip()[:160]}")
    raw = read.stdout
    try:
        data = json.loads(raw)
        if data.get("version") != LEDGER_VERSION:
            raise ValueError(f"version {data.get('version')!r}")
        return Ledger(dict(data["contacts"]), list(data["alarms"]), dict(data["settings"]))
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise DeviceError(f"the reset ledger {path} on {adb.serial} is unreadable ({error}); "
                          f"check the phone's state by hand, then delete the file") from None


def save_ledger(adb: AdbCall, path: str, ledger: Ledger) -> None:
    adb.push(ledger.to_json(), path)


def converge(adb: AdbCall, target: Ledger, *, baseline: Ledger | None = None
             ) -> StockRestore:
    """Moves the phone's contacts, alarms and settings to `target`.

    Contacts are matched by id first, then by their fields (a contact re-created by an
    earlier reset has a new id); when `baseline` is given, contacts of the baseline that had
    to be re-created get their new ids written into it so the ledger stays accurate.
    """
    state = read_device_state(adb)
    current = dict(state["tables"]["contacts"]["contacts"])
    deleted = created = 0
    wanted = dict(target.contacts)
    for cid, row in list(current.items()):
        if cid in wanted and _same(row, wanted[cid]):
            del wanted[cid]
            del current[cid]
    for cid, row in list(current.items()):  # same contact under another id
        match = next((w for w, want in wanted.items() if _same(row, want)), None)
        if match is not None:
            _rekey(baseline, match, cid)
            del wanted[match]
            del current[cid]
    for cid in current:
        delete_contact(adb, cid)
        deleted += 1
    for old_id, row in wanted.items():
        new_id = insert_contact(adb, {k: v for k, v in row.items() if v is not None})
        _rekey(baseline, old_id, new_id)
        created += 1
    times = sorted(a["time"] for a in state["tables"]["clock"]["alarms"].values())
    dismissed = set_ = 0
    for time in sorted(set(times) - set(target.alarms)):
        _intent(adb, dismiss_intent(time), lambda t=time: t not in _alarm_times(adb))
        dismissed += 1
    for time in sorted(set(target.alarms) - set(times)):
        _intent(adb, alarm_intent(time, None, None), lambda t=time: t in _alarm_times(adb))
        set_ += 1
    commands = [c for key, value in target.settings.items()
                if state["settings"].get(key) != value for c in setting_write_commands(key, value)]
    if commands:  # writing a value twice is writing it once
        adb.check(" && ".join(shlex.join(c) for c in commands), idempotent=True)
    return StockRestore(deleted, created, dismissed, set_, len(commands))


def differences(adb: AdbCall, target: Ledger) -> list[str]:
    """What the phone, read back now, still holds differently from `target` (empty: the reset
    took): contacts by their fields, alarm times, settings."""
    state = read_device_state(adb)
    have = sorted(_fields(row) for row in state["tables"]["contacts"]["contacts"].values())
    want = sorted(_fields(row) for row in target.contacts.values())
    found = []
    if have != want:
        extra = [row[0] for row in have if row not in want]
        gone = [row[0] for row in want if row not in have]
        found.append(f"contacts: {len(extra)} unexpected {extra[:3]}, {len(gone)} missing {gone[:3]}")
    times = sorted(a["time"] for a in state["tables"]["clock"]["alarms"].values())
    if times != sorted(target.alarms):
        found.append(f"alarms at {times}, wanted {sorted(target.alarms)}")
    wrong = {k: state["settings"].get(k) for k, v in target.settings.items() if state["settings"].get(k) != v}
    if wrong:
        found.append(f"settings {wrong} (wanted {({k: target.settings[k] for k in wrong})})")
    return found


def _fields(row: dict[str, Any]) -> tuple[str, ...]:
    return tuple(str(row.get(k)) for k in CONTACT_FIELDS)


def _alarm_times(adb: AdbCall) -> set[str]:
    return {a["time"] for a in read_clock(adb)[0].values()}


def _intent(adb: AdbCall, command: list[str], landed: Callable[[], bool]) -> None:
    try:
        adb.check(command, landed=landed)
    except CommandFailed as error:
        raise DeviceError(f"the clock app refused '{' '.join(command[:4])}': {error}") from None


def _same(row: dict[str, Any], want: dict[str, Any]) -> bool:
    return all(row.get(k) == want.get(k) for k in CONTACT_FIELDS)


def _rekey(ledger: Ledger | None, old_id: str, new_id: str) -> None:
    if ledger is not None and old_id in ledger.contacts and old_id != new_id:
        ledger.contacts[new_id] = ledger.contacts.pop(old_id)
