"""The stock profile: Flywheel's tools on a phone as it ships (no companion apps, no root).

Everything here goes through what Android offers the shell user (uid 2000), in the way
AndroidWorld drives real phones:

- settings: read with `settings get`, written with `cmd` (wifi, bluetooth_manager,
  connectivity airplane-mode, notification set_dnd, uimode night, location, power set-mode,
  media_session volume) or `settings put` (brightness) — Android 12 (API 31) or newer;
- contacts: the contacts provider (`content query/insert/update/delete` on
  content://com.android.contacts/raw_contacts and /data); a contact's id is its raw contact id;
- alarms and timers: the AlarmClock intents (`am start -a android.intent.action.SET_ALARM …
  SKIP_UI`), read back from `dumpsys alarm` (the clock app's alarm-clock entries);
- files: shared storage under FILES_ROOT (/sdcard/Flywheel), one folder per album, read with
  `find … -exec stat`, moved with `mv`, deleted with `rm`; a file's id is its path under the
  root. Flywheel never touches the owner's files outside that folder;
- apps: launched by the component `cmd package resolve-activity` names.

What a stock phone cannot do through the shell is listed in `UNSUPPORTED` and answered with
the `unsupported` error code, never faked. The phone's own state is read back with
`read_device_state` in the final-state shape the checkers use (tables + settings).
"""

from __future__ import annotations

import logging
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from devices.adb.android_settings import ANDROID_SETTINGS
from devices.adb.client import AdbCall, CommandFailed
from devices.adb.tools import AdbTools, alarm_intent, error_result, timer_intent
from devices.kit.apps import check_value
from devices.kit.errors import BadArguments, NotFound, ToolFailure
from devices.kit.specs import ToolSpec
from devices.protocol import DeviceError
from schemas.observations import ToolError, ToolResult

__all__ = [
    "APP_PACKAGES",
    "CONTACTS_DATA",
    "CONTACTS_RAW",
    "FILES_ROOT",
    "LAUNCHER_PACKAGES",
    "STOCK_TOOLS",
    "UNSUPPORTED",
    "StockTools",
    "app_for_package",
    "error_result",
    "parse_alarm_dump",
    "parse_rows",
    "read_device_state",
]

logger = logging.getLogger(__name__)

CONTACTS_RAW = "content://com.android.contacts/raw_contacts"
CONTACTS_DATA = "content://com.android.contacts/data"

#: Contacts data-row kinds (ContactsContract.CommonDataKinds.*.CONTENT_ITEM_TYPE) → our field.
MIME_FIELDS = {"vnd.android.cursor.item/name": "name",
               "vnd.android.cursor.item/phone_v2": "phone",
               "vnd.android.cursor.item/email_v2": "email",
               "vnd.android.cursor.item/organization": "company"}
FIELD_MIMES = {value: key for key, value in MIME_FIELDS.items()}

#: Sandbox app name → the stock packages that provide it (AOSP and Google builds), first wins.
APP_PACKAGES: dict[str, tuple[str, ...]] = {
    "settings": ("com.android.settings",),
    "clock": ("com.google.android.deskclock", "com.android.deskclock"),
    "contacts": ("com.google.android.contacts", "com.android.contacts"),
    "phone": ("com.google.android.dialer", "com.android.dialer"),
    "messages": ("com.google.android.apps.messaging", "com.android.messaging"),
    "calendar": ("com.google.android.calendar", "com.android.calendar"),
    "camera": ("com.google.android.GoogleCamera", "com.android.camera2"),
    "chrome": ("com.android.chrome",),
    "files": ("com.google.android.documentsui", "com.android.documentsui"),
}

#: Home screens of common builds; a dump rooted in one of them means no app is in front.
LAUNCHER_PACKAGES = frozenset({"com.google.android.apps.nexuslauncher", "com.android.launcher3",
                               "com.sec.android.app.launcher", "com.miui.home"})

#: The clock apps whose AlarmManager entries are the user's alarms and timers.
CLOCK_PACKAGES = frozenset(APP_PACKAGES["clock"])

EXTRA = "android.intent.extra.alarm."

#: Tools the stock profile does not offer, with the reason (shown to the agent and in the README).
UNSUPPORTED: dict[str, str] = {
    "calendar.*": "needs a calendar account; the calendar provider holds no local calendar on a "
                  "fresh phone",
    "messages.*": "the SMS provider refuses the shell user (READ_SMS/WRITE_SMS), and sending "
                  "would text a real number",
    "email.*": "no stock mail provider is readable through the shell",
    "notes.*": "stock Android has no notes app or provider",
    "maps.*": "Maps keeps its data inside the app",
    "shopping.*": "no stock shopping app",
    "files.tag": "shared storage has no tags",
    "files.untag": "shared storage has no tags",
    "files.share": "sharing needs a messaging app the shell user cannot drive",
    "clock.update_alarm": "the AlarmClock intents can set and dismiss alarms, not edit them",
    "clock.toggle_alarm": "the AlarmClock intents cannot re-enable a dismissed alarm by id",
    "clock.cancel_timer": "no AlarmClock intent cancels a running timer",
    "clock.now": "use the observation's clock instead",
}


@dataclass(frozen=True)
class StockSetting:
    """How one sandbox setting is written on a stock phone (reads use ANDROID_SETTINGS)."""

    key: str
    write: Callable[[Any], list[list[str]]]


def _onoff(service: str, verb: str, on: str, off: str) -> Callable[[Any], list[list[str]]]:
    return lambda value: [["cmd", service, *([verb] if verb else []), on if value else off]]


STOCK_SETTINGS: dict[str, StockSetting] = {s.key: s for s in (
    StockSetting("wifi", _onoff("wifi", "set-wifi-enabled", "enabled", "disabled")),
    StockSetting("bluetooth", _onoff("bluetooth_manager", "", "enable", "disable")),
    StockSetting("airplane_mode", _onoff("connectivity", "airplane-mode", "enable", "disable")),
    StockSetting("do_not_disturb", _onoff("notification", "set_dnd", "on", "off")),
    StockSetting("dark_mode", _onoff("uimode", "night", "yes", "no")),
    StockSetting("location", _onoff("location", "set-location-enabled", "true", "false")),
    StockSetting("battery_saver", _onoff("power", "set-mode", "1", "0")),
    StockSetting("brightness", lambda value: [
        ["settings", "put", "system", "screen_brightness_mode", "0"],
        ["settings", "put", "system", "screen_brightness",
         ANDROID_SETTINGS["brightness"].to_android(value)]]),
    StockSetting("volume_ring", lambda value: [
        ["cmd", "media_session", "volume", "--stream", "2", "--set", str(int(value))]]),
)}

#: VolumeCtrl.run's last line: `cmd.log(LOG_V, "volume is " + N + " in range [" + MIN + ".." + MAX + "]")`.
_VOLUME_RE = re.compile(r"^(?:\[V\] )?volume is (\d+) in range \[\d+\.\.\d+\]$", re.MULTILINE)


def setting_write_commands(key: str, value: Any) -> list[list[str]]:
    return STOCK_SETTINGS[key].write(value)


#: Printed after each command of a batched read, so every command's output is cut apart however
#: many lines it prints (AOSP 14's `cmd media_session volume --get` prints `[V] …` lines first).
_END_OF_READ = "__flywheel_end_of_read__"


def _volume(said: str) -> int:
    """The volume in `cmd media_session volume --stream 2 --get` output (AOSP 14 VolumeCtrl: a
    `[V] …` line per option, then `[V] volume is N in range [MIN..MAX]`); the raw output in the
    error."""
    match = _VOLUME_RE.search(said)
    if match is None:
        raise DeviceError(f"media_session printed no volume ({said.strip()[:200]!r})")
    return int(match.group(1))


def read_setting(adb: AdbCall, key: str) -> Any:
    if key == "volume_ring":
        return _volume(adb.check(["cmd", "media_session", "volume", "--stream", "2", "--get"],
                                 idempotent=True))
    setting = ANDROID_SETTINGS[key]
    return setting.from_android(adb.check(setting.read_command(), idempotent=True))


def read_settings(adb: AdbCall) -> dict[str, Any]:
    """Every managed setting in one shell round trip; each command's output is cut at a marker,
    so a command printing several lines is read whole."""
    keys = list(STOCK_SETTINGS)
    commands = [["cmd", "media_session", "volume", "--stream", "2", "--get"] if key ==
                "volume_ring" else ANDROID_SETTINGS[key].read_command() for key in keys]
    script = "; ".join(f"{shlex.join(c)}; echo {_END_OF_READ}" for c in commands)
    said = adb.check(script, idempotent=True)
    parts = said.split(_END_OF_READ)
    blocks = parts[:-1]
    if len(blocks) != len(keys) or parts[-1].strip():
        raise DeviceError(f"reading {len(keys)} settings gave {len(blocks)} answers; the phone printed "
                          f"{said.strip()[:200]!r}")
    values = {}
    for key, block in zip(keys, blocks, strict=True):
        if key == "volume_ring":
            values[key] = _volume(block)
            continue
        lines = [line for line in block.splitlines() if line.strip()]
        if len(lines) != 1:
            raise DeviceError(f"reading the setting {key} printed {len(lines)} lines ({block.strip()[:200]!r}); "
                              f"it should print its value alone")
        values[key] = ANDROID_SETTINGS[key].from_android(lines[0])
    return values


# -- `content query` output ------------------------------------------------------------------

def parse_rows(output: str, columns: list[str]) -> list[dict[str, str | None]]:
    """`content query --projection a:b:c` output → rows of text (None for NULL).

    With the projection known, a row is cut at ", <next column>=" only, so values holding
    ", " or "=" survive; a line without "Row: " continues the previous value (multi-line text).
    """
    text = output.strip()
    if not text or text.startswith("No result found"):
        return []
    if text.startswith("Error") or "Exception" in text.splitlines()[0]:
        raise DeviceError(f"content query failed: {text.splitlines()[0][:160]}")
    records: list[str] = []
    for line in output.rstrip("\n").split("\n"):
        match = re.match(r"^Row: \d+ (.*)$", line)
        if match:
            records.append(match.group(1))
        elif records:
            records[-1] += "\n" + line
    rows = []
    for record in records:
        row: dict[str, str | None] = {}
        rest = record
        for index, column in enumerate(columns):
            prefix = f"{column}="
            if not rest.startswith(prefix):
                raise DeviceError(f"content query row {record[:80]!r} lacks column {column}")
            rest = rest[len(prefix):]
            if index + 1 < len(columns):
                cut = rest.find(f", {columns[index + 1]}=")
                if cut < 0:
                    raise DeviceError(f"content query row {record[:80]!r} lacks column "
                                      f"{columns[index + 1]}")
                value, rest = rest[:cut], rest[cut + 2:]
            else:
                value = rest
            row[column] = None if value == "NULL" else value
        rows.append(row)
    return rows


def _query(adb: AdbCall, uri: str, columns: list[str], where: str | None = None
           ) -> list[dict[str, str | None]]:
    command = ["content", "query", "--uri", uri, "--projection", ":".join(columns)]
    if where:
        command += ["--where", where]
    return parse_rows(adb.check(command, idempotent=True), columns)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# -- contacts --------------------------------------------------------------------------------

def read_contacts(adb: AdbCall) -> dict[str, dict[str, Any]]:
    """Every visible contact as {id: {id, name, phone, email, company, starred}}."""
    raws = _query(adb, CONTACTS_RAW, ["_id", "display_name", "starred"], "deleted=0")
    contacts: dict[str, dict[str, Any]] = {}
    for raw in raws:
        contact_id = str(raw["_id"])
        contacts[contact_id] = {"id": contact_id, "name": raw["display_name"], "phone": None,
                                "email": None, "company": None,
                                "starred": raw["starred"] == "1"}
    if contacts:
        for row in _query(adb, CONTACTS_DATA, ["raw_contact_id", "mimetype", "data1"]):
            field_name = MIME_FIELDS.get(row["mimetype"] or "")
            contact = contacts.get(str(row["raw_contact_id"]))
            if field_name and contact is not None and contact[field_name] is None:
                contact[field_name] = row["data1"]
    return contacts


def _existing(rows: dict[str, dict[str, Any]], row_id: str, noun: str) -> dict[str, Any]:
    """The row with `row_id`, or NotFound naming the `noun` (contact, file)."""
    row = rows.get(row_id)
    if row is None:
        raise NotFound(f"There is no {noun} with id '{row_id}'.")
    return row


def _contact(adb: AdbCall, contact_id: str) -> dict[str, Any]:
    return _existing(read_contacts(adb), contact_id, "contact")


def insert_contact(adb: AdbCall, fields: dict[str, Any]) -> str:
    """Creates a local (account-less) raw contact with its data rows; returns its id."""
    def raw_ids() -> set[Any]:
        return {r["_id"] for r in _query(adb, CONTACTS_RAW, ["_id"])}

    before = raw_ids()
    adb.check(["content", "insert", "--uri", CONTACTS_RAW, "--bind", "account_type:n:",
               "--bind", "account_name:n:",
               "--bind", f"starred:i:{1 if fields.get('starred') else 0}"],
              landed=lambda: bool(raw_ids() - before))
    created = [i for i in raw_ids() if i not in before]
    if len(created) != 1:
        raise ToolFailure(f"the contacts provider created {len(created)} raw contacts for one "
                          f"insert; check the phone's contacts")
    contact_id = str(created[0])
    commands = [["content", "insert", "--uri", CONTACTS_DATA, "--bind",
                 f"raw_contact_id:i:{contact_id}", "--bind", f"mimetype:s:{FIELD_MIMES[name]}",
                 "--bind", f"data1:s:{value}"]
                for name, value in fields.items() if name in FIELD_MIMES and value is not None]
    if commands:
        adb.check(_join(commands), landed=lambda: _holds(adb, contact_id, fields))
    return contact_id


def _holds(adb: AdbCall, contact_id: str, fields: dict[str, Any]) -> bool:
    """Whether the contact's fields already read `fields` (the read-back after a dropped write)."""
    contact = read_contacts(adb).get(contact_id) or {}
    return all(contact.get(name) == value for name, value in fields.items()
               if name in FIELD_MIMES and value is not None)


def delete_contact(adb: AdbCall, contact_id: str) -> None:
    adb.check(["content", "delete", "--uri", CONTACTS_RAW, "--where", f"_id={int(contact_id)}"],
              idempotent=True)


def _join(commands: list[list[str]]) -> str:
    return " && ".join(shlex.join(c) for c in commands)


def _update_contact(adb: AdbCall, contact_id: str, fields: dict[str, Any]) -> None:
    commands = []
    current = _contact(adb, contact_id)
    for name, value in fields.items():
        mime = FIELD_MIMES[name]
        if current.get(name) is None:
            commands.append(["content", "insert", "--uri", CONTACTS_DATA, "--bind",
                             f"raw_contact_id:i:{int(contact_id)}", "--bind", f"mimetype:s:{mime}",
                             "--bind", f"data1:s:{value}"])
        else:
            commands.append(["content", "update", "--uri", CONTACTS_DATA, "--bind",
                             f"data1:s:{value}", "--where",
                             f"raw_contact_id={int(contact_id)} AND mimetype={_quote(mime)}"])
    if commands:
        adb.check(_join(commands), landed=lambda: _holds(adb, contact_id, fields))


# -- files on shared storage -----------------------------------------------------------------

#: The folder of shared storage Flywheel owns: albums are its sub-folders; nothing outside it
#: is read, moved or deleted, so the owner's own files are safe.
FILES_ROOT = "/sdcard/Flywheel"

_KINDS = {"photo": (".jpg", ".jpeg", ".png", ".heic", ".webp", ".gif"),
          "audio": (".mp3", ".m4a", ".ogg", ".wav", ".flac", ".aac")}
_SAFE_PART = re.compile(r"^[A-Za-z0-9 ._()+,-]+$")


def file_kind(name: str) -> str:
    lower = name.lower()
    return next((kind for kind, ends in _KINDS.items() if lower.endswith(ends)), "document")


def _part(value: str, what: str) -> str:
    """An album or file name that is one path component (no '/', no '..', printable)."""
    if not _SAFE_PART.fullmatch(value) or value in (".", ".."):
        raise BadArguments(f"{what} {value!r} is not a plain name (letters, digits, spaces and "
                           f"._()+,- only)")
    return value


def file_row(path: str, size: int) -> dict[str, Any] | None:
    """A file under FILES_ROOT as the files table holds it (None outside an album)."""
    relative = path[len(FILES_ROOT) + 1:] if path.startswith(FILES_ROOT + "/") else None
    if relative is None or relative.count("/") != 1:
        return None
    album, name = relative.split("/")
    return {"id": relative, "name": name, "album": album, "kind": file_kind(name),
            "size_kb": max(1, -(-size // 1024))}


def list_all_files(adb: AdbCall) -> dict[str, int]:
    """Every file under FILES_ROOT at any depth, path → size in bytes (toybox `find -exec stat`).
    A line that is not `SIZE PATH` under the root fails the read with the raw output, so no file
    is ever hidden from a reset or a checker."""
    out = adb.shell(["find", FILES_ROOT, "-type", "f", "-exec", "stat", "-c", "%s %n", "{}", "+"],
                    idempotent=True)
    if out.exit_code != 0:
        if "No such file" in out.error_text + out.text:
            return {}
        raise CommandFailed(f"listing {FILES_ROOT} failed (exit {out.exit_code}): "
                            f"{(out.error_text or out.text).strip()[:160]}", out.exit_code,
                            out.error_text + out.text)
    found: dict[str, int] = {}
    for line in out.text.splitlines():
        size, _, path = line.partition(" ")
        if not size.isdigit() or not path.startswith(FILES_ROOT + "/"):
            raise CommandFailed(f"listing {FILES_ROOT} printed a line that is not 'SIZE PATH' under "
                                f"it: {line[:160]!r}", out.exit_code, out.text)
        found[path] = int(size)
    return found


def read_files(adb: AdbCall) -> dict[str, dict[str, Any]]:
    """Every file in an album under FILES_ROOT, by id (its path under the root)."""
    files: dict[str, dict[str, Any]] = {}
    for path, size in list_all_files(adb).items():
        row = file_row(path, size)
        if row is not None:
            files[row["id"]] = row
    return files


def _file(adb: AdbCall, file_id: str) -> dict[str, Any]:
    return _existing(read_files(adb), file_id, "file")


def _files_list(adb: AdbCall, args: dict[str, Any]) -> Any:
    rows = sorted(read_files(adb).values(), key=lambda r: r["id"])
    return [r for r in rows if ("album" not in args or r["album"].lower() == args["album"].lower())
            and ("kind" not in args or r["kind"] == args["kind"])]


def _files_search(adb: AdbCall, args: dict[str, Any]) -> Any:
    needle = args["query"].lower()
    return [r for r in _files_list(adb, {k: v for k, v in args.items() if k == "kind"})
            if needle in r["name"].lower() or needle in r["album"].lower()]


def _files_move(adb: AdbCall, args: dict[str, Any]) -> Any:
    row = _file(adb, args["id"])
    album = _part(args["album"], "album")
    target = f"{album}/{row['name']}"
    if target == row["id"]:
        return row
    if target in read_files(adb):
        raise ToolFailure(f"{album} already holds a file named {row['name']}.")
    def moved() -> bool:
        now = read_files(adb)
        return target in now and row["id"] not in now

    adb.check(_join([["mkdir", "-p", f"{FILES_ROOT}/{album}"],
                     ["mv", "--", f"{FILES_ROOT}/{row['id']}", f"{FILES_ROOT}/{target}"]]),
              landed=moved)
    return _file(adb, target)


def _files_delete(adb: AdbCall, args: dict[str, Any]) -> Any:
    row = _file(adb, args["id"])
    adb.check(["rm", "-f", "--", f"{FILES_ROOT}/{row['id']}"], idempotent=True)
    if row["id"] in read_files(adb):
        raise ToolFailure(f"the phone accepted deleting {row['id']} but still lists it")
    return row


def place_files(adb: AdbCall, wanted: dict[str, int]) -> tuple[int, int]:
    """Makes FILES_ROOT hold exactly `wanted` (id → size in KiB); returns (deleted, written).

    Files are compared by id and size; a missing or different one is written with filler
    bytes of its size (tasks care about names, albums and sizes, not contents). Anything else
    under the root — a file outside an album, or in a folder inside one — is removed, and the
    result is read back: a root that still differs is a DeviceError (the reset failed)."""
    present = list_all_files(adb)
    current = {row["id"]: row for path, size in present.items() if (row := file_row(path, size))}
    extra = [fid for fid, row in current.items() if wanted.get(fid) != row["size_kb"]]
    stray = [path for path, size in present.items() if file_row(path, size) is None]
    doomed = [f"{FILES_ROOT}/{fid}" for fid in extra] + stray
    if doomed:
        adb.check(_join([["rm", "-f", "--", path] for path in doomed]), idempotent=True)
    written = 0
    for fid, size_kb in sorted(wanted.items()):
        if fid in current and fid not in extra:
            continue
        album, name = fid.split("/")
        _part(album, "album")
        _part(name, "file name")
        adb.check(["mkdir", "-p", f"{FILES_ROOT}/{album}"], idempotent=True)
        adb.push(b"\0" * (size_kb * 1024), f"{FILES_ROOT}/{fid}")
        written += 1
    after = list_all_files(adb)
    held = {row["id"]: row["size_kb"] for path, size in after.items() if (row := file_row(path, size))}
    if held != wanted or len(after) != len(held):
        left = sorted(set(after) - {f"{FILES_ROOT}/{fid}" for fid in wanted})
        missing = sorted(set(wanted) - set(held))
        raise DeviceError(f"placing the task's files left {FILES_ROOT} different from the task: "
                          f"{len(left)} unexpected ({', '.join(left[:3])}), {len(missing)} missing "
                          f"({', '.join(missing[:3])})")
    return len(doomed), written


# -- alarms and timers -----------------------------------------------------------------------

_ALARM_HEAD = re.compile(r"^\s+(RTC_WAKEUP|RTC|ELAPSED_REALTIME_WAKEUP|ELAPSED_REALTIME|"
                         r"ELAPSED_WAKEUP|ELAPSED) #\d+: Alarm\{\S+ type \d+ origWhen (\S+) .*"
                         r" (\S+)\}$")
_ORIG_LOCAL = re.compile(r"origWhen=(\d{4}-\d\d-\d\d \d\d:\d\d):\d\d")
_TRIGGER = re.compile(r"alarmClock=AlarmClockInfo\{triggerTime=(\d+)")  # before Android 12
#: Android 12+ (AOSP 14 `Alarm.dump`): an `Alarm clock:` block whose `triggerTime=` is local time.
_TRIGGER_LOCAL = re.compile(r"Alarm clock:\s*\n\s*triggerTime=(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d)(?::\d\d(?:\.\d+)?)?")
_WHEN_ELAPSED = re.compile(r"whenElapsed=([+-][\dhms]+)")
_DURATION = re.compile(r"([+-])(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?")


def _duration_ms(text: str) -> int:
    match = _DURATION.fullmatch(text)
    if match is None:
        raise DeviceError(f"dumpsys alarm printed an unreadable duration {text!r}")
    sign, d, h, m, s, ms = match.groups()
    total = ((int(d or 0) * 24 + int(h or 0)) * 60 + int(m or 0)) * 60_000
    total += int(s or 0) * 1000 + int(ms or 0)
    return -total if sign == "-" else total


def parse_alarm_dump(text: str) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """`dumpsys alarm` → (alarms, timers) the clock app scheduled.

    An alarm is a clock-app entry carrying alarm-clock info (what AlarmManager.setAlarmClock
    schedules): on Android 12+ (AOSP 14's `Alarm.dump`) an `Alarm clock:` block with
    `triggerTime=YYYY-MM-DD HH:MM:SS.mmm` in local time; before, `alarmClock=AlarmClockInfo{
    triggerTime=<epoch ms>…}` with the local time in `origWhen`.
    A timer is a clock-app entry tagged …TIMER…; its value is the seconds left. Labels and
    repeat days are not in the dump, so they are not reported.
    """
    blocks: list[tuple[str, str, list[str]]] = []
    for line in text.splitlines():
        head = _ALARM_HEAD.match(line)
        if head:
            blocks.append((head.group(1), head.group(3), []))
        elif blocks and line.startswith("    "):
            blocks[-1][2].append(line.strip())
    alarms: dict[str, dict[str, Any]] = {}
    timers: dict[str, dict[str, Any]] = {}
    for _kind, package, body in blocks:
        if package not in CLOCK_PACKAGES:
            continue
        joined = "\n".join(body)
        trigger = _TRIGGER.search(joined)
        local_trigger = _TRIGGER_LOCAL.search(joined)
        if local_trigger is not None:
            year, month, day, hour, minute = local_trigger.groups()
            alarm_id = f"al{year}{month}{day}{hour}{minute}"
            while alarm_id in alarms:
                alarm_id += "b"
            alarms[alarm_id] = {"id": alarm_id, "time": f"{hour}:{minute}", "enabled": True}
        elif trigger is not None:
            local = _ORIG_LOCAL.search(joined)
            when = (local.group(1)[-5:] if local else
                    datetime.fromtimestamp(int(trigger.group(1)) / 1000).strftime("%H:%M"))
            alarm_id = f"al{trigger.group(1)}"
            while alarm_id in alarms:
                alarm_id += "b"
            alarms[alarm_id] = {"id": alarm_id, "time": when, "enabled": True}
        elif "TIMER" in joined.upper():
            left = _WHEN_ELAPSED.search(joined)
            seconds = max(0, round(_duration_ms(left.group(1)) / 1000)) if left else None
            timer_id = f"tm{len(timers) + 1}"
            timers[timer_id] = {"id": timer_id, "seconds_left": seconds}
    return alarms, timers


def read_clock(adb: AdbCall) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    return parse_alarm_dump(adb.check(["dumpsys", "alarm"], idempotent=True))


def dismiss_intent(time: str) -> list[str]:
    """AlarmClock.ACTION_DISMISS_ALARM by time (the clock app turns the matching alarm off)."""
    hour, minute = (int(part) for part in time.split(":"))
    return ["am", "start", "-a", "android.intent.action.DISMISS_ALARM",
            "--es", EXTRA + "SEARCH_MODE", "android.time",
            "--ei", EXTRA + "HOUR", str(hour), "--ei", EXTRA + "MINUTES", str(minute),
            "--ez", EXTRA + "SKIP_UI", "true"]


# -- the device's state, as checkers read it --------------------------------------------------

def read_device_state(adb: AdbCall) -> dict[str, Any]:
    """The phone's part of the final state: {"tables": {app: {table: {id: row}}}, "settings"}."""
    alarms, timers = read_clock(adb)
    return {"tables": {"contacts": {"contacts": read_contacts(adb)},
                       "clock": {"alarms": alarms, "timers": timers},
                       "files": {"files": read_files(adb)}},
            "settings": read_settings(adb)}


# -- the tools -------------------------------------------------------------------------------

Handler = Callable[[AdbCall, dict[str, Any]], Any]


def _settings_set(adb: AdbCall, args: dict[str, Any]) -> Any:
    key = args["key"]
    value = check_value(key, args["value"])
    previous = read_setting(adb, key)
    return _write_setting(adb, key, value, previous)


def _settings_toggle(adb: AdbCall, args: dict[str, Any]) -> Any:
    key = args["key"]
    previous = read_setting(adb, key)
    return _write_setting(adb, key, not previous, previous)


def _write_setting(adb: AdbCall, key: str, value: Any, previous: Any) -> Any:
    """Writes a setting and reads it back: a write the phone took without effect (battery saver
    while charging, DND under a policy) is a failure naming what the phone reports, not success."""
    adb.check(_join(setting_write_commands(key, value)), idempotent=True)  # writing a value twice is once
    now = read_setting(adb, key)
    if now != value:
        raise ToolFailure(f"the phone accepted setting {key} to {value!r} but still reports {now!r} "
                          f"(it may refuse it in this state, e.g. battery saver while charging)")
    return {"key": key, "value": now, "previous": previous}


def _contacts_search(adb: AdbCall, args: dict[str, Any]) -> Any:
    needle = args["query"].lower()
    return [c for c in read_contacts(adb).values()
            if any(needle in str(c.get(f) or "").lower() for f in ("name", "phone", "email",
                                                                   "company"))]


def _contacts_list(adb: AdbCall, args: dict[str, Any]) -> Any:
    rows = list(read_contacts(adb).values())
    if args.get("starred"):
        rows = [c for c in rows if c["starred"]]
    return rows


def _contacts_add(adb: AdbCall, args: dict[str, Any]) -> Any:
    return _contact(adb, insert_contact(adb, args))


def _contacts_delete(adb: AdbCall, args: dict[str, Any]) -> Any:
    contact = _contact(adb, args["id"])
    delete_contact(adb, args["id"])
    if args["id"] in read_contacts(adb):
        raise ToolFailure(f"the contacts provider accepted deleting contact {args['id']} but still "
                          "lists it (it may belong to a read-only account)")
    return contact


def _contacts_star(adb: AdbCall, args: dict[str, Any]) -> Any:
    _contact(adb, args["id"])
    adb.check(["content", "update", "--uri", CONTACTS_RAW, "--bind",
               f"starred:i:{1 if args['starred'] else 0}", "--where", f"_id={int(args['id'])}"],
              idempotent=True)
    return _verified(adb, args["id"], {"starred": bool(args["starred"])})


def _contacts_update(adb: AdbCall, args: dict[str, Any]) -> Any:
    fields = {k: v for k, v in args.items() if k in FIELD_MIMES}
    if not fields:
        raise BadArguments("Give at least one of name, phone, email or company to change.")
    _update_contact(adb, args["id"], fields)
    return _verified(adb, args["id"], fields)


def _verified(adb: AdbCall, contact_id: str, fields: dict[str, Any]) -> dict[str, Any]:
    """The contact read back after a write; a field that did not take is a failure naming it."""
    contact = _contact(adb, contact_id)
    wrong = {k: contact.get(k) for k, v in fields.items() if contact.get(k) != v}
    if wrong:
        raise ToolFailure(f"the contacts provider accepted the change to contact {contact_id} but "
                          f"still reports {wrong}")
    return contact


def _set_alarm(adb: AdbCall, args: dict[str, Any]) -> Any:
    def at_time() -> list[dict[str, Any]]:
        return [a for a in read_clock(adb)[0].values() if a["time"] == args["time"]]

    before = len(at_time())
    adb.check(alarm_intent(args["time"], args.get("label"), args.get("days")),
              landed=lambda: len(at_time()) > before)
    found = at_time()
    if not found:
        raise ToolFailure(f"the clock app accepted the alarm intent but no {args['time']} alarm "
                          f"appears in dumpsys alarm")
    return found[-1]


def _list_alarms(adb: AdbCall, args: dict[str, Any]) -> Any:
    return sorted(read_clock(adb)[0].values(), key=lambda a: (a["time"], a["id"]))


def _delete_alarm(adb: AdbCall, args: dict[str, Any]) -> Any:
    alarm = read_clock(adb)[0].get(args["id"])
    if alarm is None:
        raise NotFound(f"There is no alarm with id '{args['id']}'.")
    adb.check(dismiss_intent(alarm["time"]), landed=lambda: args["id"] not in read_clock(adb)[0])
    if args["id"] in read_clock(adb)[0]:
        raise ToolFailure(f"the clock app accepted dismissing the {alarm['time']} alarm but "
                          "dumpsys alarm still lists it")
    return alarm


def _start_timer(adb: AdbCall, args: dict[str, Any]) -> Any:
    before = len(read_clock(adb)[1])
    adb.check(timer_intent(args["seconds"], args.get("label")),
              landed=lambda: len(read_clock(adb)[1]) > before)
    timers = list(read_clock(adb)[1].values())
    if len(timers) <= before:
        raise ToolFailure("the clock app accepted the timer intent but no new timer appears in "
                          "dumpsys alarm")
    return max(timers, key=lambda t: t["seconds_left"] or 0)


def _list_timers(adb: AdbCall, args: dict[str, Any]) -> Any:
    return list(read_clock(adb)[1].values())


def _settings_get(adb: AdbCall, args: dict[str, Any]) -> Any:
    return {"key": args["key"], "value": read_setting(adb, args["key"])}


#: The tools a stock phone offers, by sandbox tool name.
STOCK_TOOLS: dict[str, Handler] = {
    "settings.get": _settings_get,
    "settings.list": lambda adb, args: read_settings(adb),
    "settings.set": _settings_set,
    "settings.toggle": _settings_toggle,
    "contacts.search": _contacts_search,
    "contacts.list": _contacts_list,
    "contacts.get": lambda adb, args: _contact(adb, args["id"]),
    "contacts.add": _contacts_add,
    "contacts.delete": _contacts_delete,
    "contacts.star": _contacts_star,
    "contacts.update": _contacts_update,
    "clock.set_alarm": _set_alarm,
    "clock.list_alarms": _list_alarms,
    "clock.delete_alarm": _delete_alarm,
    "clock.start_timer": _start_timer,
    "clock.list_timers": _list_timers,
    "files.list": _files_list,
    "files.search": _files_search,
    "files.get": lambda adb, args: _file(adb, args["id"]),
    "files.move": _files_move,
    "files.delete": _files_delete,
}


def unsupported_reason(name: str) -> str | None:
    if name in STOCK_TOOLS:
        return None
    return UNSUPPORTED.get(name) or UNSUPPORTED.get(name.split(".", 1)[0] + ".*")


def _error(name: str, code: str, message: str) -> ToolResult:
    return ToolResult(name=name, ok=False, error=ToolError(code=code, message=message))  # type: ignore[arg-type]


class StockTools(AdbTools):
    """Runs tool calls on a stock phone: argument check, then the stock mapping above."""

    @property
    def specs(self) -> dict[str, ToolSpec]:
        return {name: tool.spec for name, tool in self.registry.items() if name in STOCK_TOOLS}

    def refusal(self, name: str) -> ToolResult | None:
        reason = unsupported_reason(name)
        if reason is None:
            return None
        return _error(name, "unsupported", f"{name} is not available on a stock phone: {reason}.")

    def run(self, name: str, args: dict[str, Any]) -> ToolResult:
        return ToolResult(name=name, ok=True, value=STOCK_TOOLS[name](self.adb, args))


def app_for_package(package: str | None) -> str | None:
    """The foreground app's name from a package: 'home' for launchers, our name for the stock
    apps we know, otherwise the package itself (never None for a package)."""
    if not package:
        return None
    if package in LAUNCHER_PACKAGES or package.endswith(".launcher") or "launcher" in package:
        return "home"
    for app, packages in APP_PACKAGES.items():
        if package in packages:
            return app
    return package
