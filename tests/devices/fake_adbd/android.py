"""A small stock Android behind the fake adbd: the shell commands a non-rooted phone offers the
shell user, answering in the formats Android prints, from its own state (no companion apps).

Covered: `getprop`, `settings`, `cmd` (wifi, bluetooth_manager, connectivity, notification,
uimode, location, power, package resolve-activity), `svc`, `pm list packages`, `am start`
(SET_ALARM, SET_TIMER, DISMISS_ALARM, -n component), `monkey`, `content` on the contacts
provider (raw_contacts, data) and a permission-denied SMS provider, `dumpsys alarm`, `wm size`,
`input` (tap, swipe, keyevent, text, keycombination from API 33), `uiautomator dump`,
`screencap -p`, and `echo/true/cat/ls/rm` on a small file tree. GUI: a launcher, Settings
(Network & internet → Airplane mode; Display → Dark theme), Clock (alarm list with switches)
and Contacts (the list of names).
"""

from __future__ import annotations

import logging
import re
import shlex
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from devices.adb.uixml import DUMP_TRAILER, render_hierarchy
from schemas.observations import Bounds, UIElement
from tests.devices.fake_adb.png import screen_png
from tests.devices.fake_adb.shell import run_sequence

__all__ = ["CLOCK", "CONTACTS", "LAUNCHER", "SETTINGS", "StockAndroid"]

logger = logging.getLogger(__name__)

LAUNCHER = "com.google.android.apps.nexuslauncher"
SETTINGS = "com.android.settings"
CLOCK = "com.google.android.deskclock"
CONTACTS = "com.google.android.contacts"
CHROME = "com.android.chrome"

#: Launcher label → (package, launcher activity).
APPS = {"Contacts": (CONTACTS, "com.android.contacts.activities.PeopleActivity"),
        "Clock": (CLOCK, "com.android.deskclock.DeskClock"),
        "Settings": (SETTINGS, ".Settings"),
        "Chrome": (CHROME, "com.google.android.apps.chrome.Main")}

#: Other installed packages (no launcher entry), as `pm list packages` shows them.
SYSTEM_PACKAGES = ("android", "com.android.shell", "com.android.systemui",
                   "com.android.providers.contacts", "com.android.providers.telephony", LAUNCHER)

EXTRA = "android.intent.extra.alarm."
NAME_MIME = "vnd.android.cursor.item/name"

Output = tuple[bytes, bytes, int]


def _ok(text: str = "") -> Output:
    return text.encode(), b"", 0


def _err(text: str, code: int = 1) -> Output:
    return b"", (text.rstrip("\n") + "\n").encode(), code


@dataclass
class Alarm:
    alarm_id: int
    hour: int
    minute: int
    label: str = ""
    days: tuple[int, ...] = ()
    enabled: bool = True


@dataclass
class Timer:
    timer_id: int
    length_s: int
    started_elapsed_ms: int
    label: str = ""


@dataclass
class StockAndroid:
    """One phone's state, and a shell that reads and changes it."""

    sdk: int = 34
    width: int = 1080
    height: int = 2340
    now_ms: int = 1_767_254_400_000  # 2026-01-01 08:00 in the device's time zone (UTC)
    elapsed_ms: int = 3_600_000  # an hour since boot
    settings: dict[str, dict[str, str]] = field(default_factory=lambda: {
        "global": {"wifi_on": "1", "bluetooth_on": "0", "airplane_mode_on": "0",
                   "zen_mode": "0", "low_power": "0"},
        "secure": {"ui_night_mode": "1", "location_mode": "3"},
        "system": {"screen_brightness": "153", "screen_brightness_mode": "1"},
    })
    raw_contacts: dict[int, dict[str, Any]] = field(default_factory=dict)
    data: dict[int, dict[str, Any]] = field(default_factory=dict)
    alarms: dict[int, Alarm] = field(default_factory=dict)
    timers: dict[int, Timer] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    #: Folders made by mkdir; the others exist through the files in them (adbd's push makes
    #: a file's folders), as toybox's mkdir, mv, rm and find see them.
    dirs: set[str] = field(default_factory=set)
    #: Names of contacts a read-only account holds: `content delete` leaves them (exit 0, as the
    #: provider does for rows the caller may not remove).
    undeletable: set[str] = field(default_factory=set)
    history: list[str] = field(default_factory=list)
    foreground: str = LAUNCHER
    screen: str = "home"
    typed: str = ""
    #: The next this-many `uiautomator dump`s fail as AOSP 14 does when the UI never idles: the
    #: error on stderr, exit 0, and the previous dump file left where it was.
    dump_idle_failures: int = 0
    charging: bool = False  # plugged in: battery saver cannot be turned on (exit 0, nothing changes)
    _ids: dict[str, int] = field(default_factory=dict)
    _alarm_rows: dict[int, int] = field(default_factory=dict)
    _resumed: dict[str, str] = field(default_factory=dict)  # package -> the screen it was left on  # the top of an alarm's row -> its id
    _elements: list[UIElement] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _next(self, kind: str) -> int:
        self._ids[kind] = self._ids.get(kind, 0) + 1
        return self._ids[kind]

    # -- seeding (what the phone held before Flywheel came) ---------------------------------

    def add_contact(self, name: str, phone: str | None = None, email: str | None = None,
                    starred: bool = False) -> int:
        raw = self._next("raw")
        self.raw_contacts[raw] = {"_id": raw, "contact_id": raw, "deleted": 0,
                                  "starred": int(starred), "display_name": name,
                                  "account_name": None, "account_type": None}
        for mime, value in ((NAME_MIME, name), ("vnd.android.cursor.item/phone_v2", phone),
                            ("vnd.android.cursor.item/email_v2", email)):
            if value is not None:
                row = self._next("data")
                self.data[row] = {"_id": row, "raw_contact_id": raw, "mimetype": mime,
                                  "data1": value, "data2": "2" if "phone" in mime else None}
        return raw

    # -- the shell ----------------------------------------------------------------------------

    def run(self, command: str) -> Output:
        """One shell command line; ';' and '&&' sequences are allowed."""
        with self._lock:
            self.history.append(command)
            try:
                lexer = shlex.shlex(command, posix=True, punctuation_chars=";&")
                lexer.whitespace_split = True
                tokens = list(lexer)
            except ValueError as error:
                return _err(f"/system/bin/sh: syntax error: {error}", 2)
            return run_sequence(tokens, self._one, status=True)

    def _one(self, argv: list[str]) -> Output:
        handler = getattr(self, "_cmd_" + argv[0].replace("-", "_"), None)
        if handler is None:
            return _err(f"/system/bin/sh: {argv[0]}: inaccessible or not found", 127)
        try:
            return handler(argv[1:])
        except (ValueError, KeyError, IndexError) as error:
            return _err(f"Error: {error}")

    # -- basics -------------------------------------------------------------------------------

    def _cmd_true(self, args: list[str]) -> Output:
        return _ok()

    def _cmd_false(self, args: list[str]) -> Output:
        return b"", b"", 1

    def _cmd_echo(self, args: list[str]) -> Output:
        return _ok(" ".join(args) + "\n")

    def _cmd_getprop(self, args: list[str]) -> Output:
        props = {"ro.build.version.sdk": str(self.sdk), "ro.product.model": "Pixel 7",
                 "persist.sys.timezone": "UTC", "ro.build.version.release": str(self.sdk - 20)}
        if not args:
            return _ok("".join(f"[{k}]: [{v}]\n" for k, v in props.items()))
        return _ok(props.get(args[0], "") + "\n")

    def _cmd_cat(self, args: list[str]) -> Output:
        data = self.files.get(args[0])
        if data is None:
            return _err(f"cat: {args[0]}: No such file or directory")
        return data, b"", 0

    def _is_dir(self, path: str) -> bool:
        path = path.rstrip("/") or "/"
        return path in ("/", "/sdcard", "/data/local/tmp") or path in self.dirs or any(
            name.startswith(path + "/") for name in self.files)

    def _cmd_rm(self, args: list[str]) -> Output:
        """toybox rm: `-f` quiet about missing paths, `-r` for folders."""
        flags = "".join(a[1:] for a in args if a.startswith("-") and a != "--")
        for path in (a.rstrip("/") for a in args if not a.startswith("-")):
            if path in self.files:
                del self.files[path]
            elif self._is_dir(path):
                if "r" not in flags:
                    return _err(f"rm: '{path}': Is a directory")
                for name in [n for n in self.files if n.startswith(path + "/")]:
                    del self.files[name]
                self.dirs = {d for d in self.dirs if d != path and not d.startswith(path + "/")}
            elif "f" not in flags:
                return _err(f"rm: '{path}': No such file or directory")
        return _ok()

    def _cmd_mkdir(self, args: list[str]) -> Output:
        """toybox mkdir: an existing folder or a missing parent is an error unless `-p`."""
        parents = "-p" in args
        for path in (a.rstrip("/") for a in args if not a.startswith("-")):
            if path in self.files or (self._is_dir(path) and not parents):
                return _err(f"mkdir: '{path}': File exists")
            parent = path.rsplit("/", 1)[0] or "/"
            if not parents and not self._is_dir(parent):
                return _err(f"mkdir: '{path}': No such file or directory")
            while path and not self._is_dir(path):
                self.dirs.add(path)
                path = path.rsplit("/", 1)[0]
        return _ok()

    def _cmd_mv(self, args: list[str]) -> Output:
        src, dst = (a for a in args if a != "--")
        if src not in self.files:
            return _err(f"mv: '{src}': No such file or directory")
        if self._is_dir(dst):
            dst = f"{dst.rstrip('/')}/{src.rsplit('/', 1)[1]}"
        if not self._is_dir(dst.rsplit("/", 1)[0] or "/"):
            return _err(f"mv: bad '{dst}': No such file or directory")
        self.files[dst] = self.files.pop(src)
        return _ok()

    def _cmd_find(self, args: list[str]) -> Output:
        """toybox find ROOT -type f -exec stat -c '%s %n' {} +: every file at any depth; an
        empty folder prints nothing (exit 0), a missing one is an error."""
        if args[1:] != ["-type", "f", "-exec", "stat", "-c", "%s %n", "{}", "+"]:
            return _err(f"find: unsupported arguments {args[1:]}")
        root = args[0].rstrip("/")
        if not self._is_dir(root):
            return _err(f"find: '{args[0]}': No such file or directory")
        found = sorted(name for name in self.files if name.startswith(root + "/"))
        return _ok("".join(f"{len(self.files[name])} {name}\n" for name in found))

    def _cmd_ls(self, args: list[str]) -> Output:
        path = next((a for a in args if not a.startswith("-")), "/sdcard")
        if path in self.files:
            return _ok(path + "\n")
        if not any(name.startswith(path.rstrip("/") + "/") for name in self.files):
            return _err(f"ls: {path}: No such file or directory")
        path = path.rstrip("/") + "/"
        names = sorted({name[len(path):].split("/")[0] for name in self.files
                        if name.startswith(path)})
        return _ok("".join(n + "\n" for n in names))

    def _cmd_wm(self, args: list[str]) -> Output:
        if args[:1] == ["size"]:
            return _ok(f"Physical size: {self.width}x{self.height}\n")
        return _err(f"Error: unknown command '{args[0] if args else ''}'", 255)

    def _cmd_screencap(self, args: list[str]) -> Output:
        if "-p" not in args:
            return _err("screencap: only -p is supported here")
        texts = [e.text or e.content_description or "" for e in self._render()]
        return screen_png((self.foreground + "|" + "|".join(texts)).encode()), b"", 0

    # -- settings -----------------------------------------------------------------------------

    def _cmd_settings(self, args: list[str]) -> Output:
        verb, namespace = args[0], args[1]
        if namespace not in self.settings:
            return _err(f"Invalid namespace '{namespace}'")
        table = self.settings[namespace]
        if verb == "get":
            return _ok(table.get(args[2], "null") + "\n")
        if verb == "put":
            table[args[2]] = args[3]
            return _ok()
        if verb == "delete":
            return _ok(f"Deleted {int(table.pop(args[2], None) is not None)} rows\n")
        if verb == "list":
            return _ok("".join(f"{k}={v}\n" for k, v in sorted(table.items())))
        return _err(f"Invalid command: {verb}")

    def _put(self, namespace: str, key: str, value: str) -> Output:
        self.settings[namespace][key] = value
        return _ok()

    def _cmd_svc(self, args: list[str]) -> Output:
        service, state = args[0], args[1]
        key = {"wifi": "wifi_on", "bluetooth": "bluetooth_on"}.get(service)
        if key is None or state not in ("enable", "disable"):
            return _err(f"svc: unknown command {service} {state}")
        return self._put("global", key, "1" if state == "enable" else "0")

    def _cmd_cmd(self, args: list[str]) -> Output:
        service, rest = args[0], args[1:]
        if service == "wifi" and rest[:1] == ["set-wifi-enabled"]:
            return self._put("global", "wifi_on", "1" if rest[1] == "enabled" else "0")
        if service == "bluetooth_manager" and rest[:1] in (["enable"], ["disable"]):
            return self._put("global", "bluetooth_on", "1" if rest[0] == "enable" else "0")
        if service == "connectivity" and rest[:1] == ["airplane-mode"]:
            if len(rest) == 1:
                return _ok("enabled\n" if self.settings["global"]["airplane_mode_on"] == "1"
                           else "disabled\n")
            return self._put("global", "airplane_mode_on", "1" if rest[1] == "enable" else "0")
        if service == "notification" and rest[:1] == ["set_dnd"]:
            return self._put("global", "zen_mode", "0" if rest[1] in ("off", "all") else "1")
        if service == "uimode" and rest[:1] == ["night"]:
            if len(rest) == 1:
                mode = self.settings["secure"]["ui_night_mode"]
                return _ok(f"Night mode: {'yes' if mode == '2' else 'no'}\n")
            self._put("secure", "ui_night_mode", {"yes": "2", "no": "1", "auto": "0"}[rest[1]])
            return _ok(f"Night mode: {rest[1]}\n")
        if service == "location" and rest[:1] == ["set-location-enabled"]:
            return self._put("secure", "location_mode", "3" if rest[1] == "true" else "0")
        if service == "power" and rest[:1] == ["set-mode"]:
            if self.charging and rest[1] == "1":  # BatterySaverStateMachine: no saver while plugged in
                return _ok()
            return self._put("global", "low_power", "1" if rest[1] == "1" else "0")
        if service == "media_session" and rest[:3] == ["volume", "--stream", "2"]:
            if rest[3:4] == ["--get"]:
                volume = self.settings["system"].get("volume_ring", "5")
                # AOSP 14 VolumeCtrl.run: each option logs `[V] …` (MediaShellCommand.log prints
                # "code msg"), then the value, logged at [V] too
                return _ok("[V] will control stream=2 (STREAM_RING)\n[V] will get volume\n"
                           f"[V] Connecting to AudioService\n[V] volume is {volume} in range [0..7]\n")
            return self._put("system", "volume_ring", str(int(rest[4])))
        if service == "package" and rest[:1] == ["resolve-activity"]:
            return self._resolve(rest[1:])
        if service == "package" and rest[:2] == ["list", "packages"]:
            return self._cmd_pm(["list", "packages"])
        return _err(f"Unknown command: {' '.join(args[:2])}", 255)

    # -- packages and activities ----------------------------------------------------------------

    def _packages(self) -> list[str]:
        return sorted({p for p, _ in APPS.values()} | set(SYSTEM_PACKAGES))

    def _cmd_pm(self, args: list[str]) -> Output:
        if args[:2] == ["list", "packages"]:
            return _ok("".join(f"package:{p}\n" for p in self._packages()))
        if args[:1] == ["path"]:
            if args[1] not in self._packages():
                return _err("", 1)
            return _ok(f"package:/system/app/{args[1]}/base.apk\n")
        return _err(f"Unknown command: {args[0] if args else ''}")

    def _resolve(self, args: list[str]) -> Output:
        package = args[-1]
        for (pkg, activity) in APPS.values():
            if pkg == package:
                return _ok("priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 "
                           f"isDefault=true\n{pkg}/{activity}\n")
        return _ok("No activity found\n")

    def _launch(self, package: str) -> None:
        """Brings `package` to the front where it was left (a stock app resumes its last screen
        after HOME; only a force-stop sends it back to its launch screen)."""
        if self.foreground != LAUNCHER:
            self._resumed[self.foreground] = self.screen
        self.foreground = package
        self.screen = self._resumed.get(package) or {SETTINGS: "settings", CLOCK: "alarms",
                                                     CONTACTS: "contacts"}.get(package, "app")

    def _cmd_monkey(self, args: list[str]) -> Output:
        package = args[args.index("-p") + 1]
        if package not in {p for p, _ in APPS.values()}:
            return _err("** No activities found to run, monkey aborted.", 251)
        self._launch(package)
        return _ok("Events injected: 1\n## Network stats: elapsed time=12ms\n")

    def _cmd_am(self, args: list[str]) -> Output:
        if args[:1] == ["force-stop"]:
            self._resumed.pop(args[1], None)
            if self.foreground == args[1]:
                self.foreground, self.screen = LAUNCHER, "home"
            return _ok()
        if args[:1] != ["start"]:
            return _err(f"Error: unknown command '{args[0] if args else ''}'")
        action = component = None
        extras: dict[str, Any] = {}
        i = 1
        while i < len(args):
            flag = args[i]
            if flag == "-a":
                action, i = args[i + 1], i + 2
            elif flag == "-n":
                component, i = args[i + 1], i + 2
            elif flag in ("-c", "-W", "-S", "--user"):
                i += 2 if flag in ("-c", "--user") else 1
            elif flag in ("--ei", "--es", "--ez", "--eia", "--el"):
                key, value = args[i + 1], args[i + 2]
                extras[key] = (int(value) if flag in ("--ei", "--el") else
                               value.lower() == "true" if flag == "--ez" else
                               tuple(int(v) for v in value.split(",")) if flag == "--eia"
                               else value)
                i += 3
            else:
                return _err(f"Error: Unknown option: {flag}")
        if component is not None:
            package = component.split("/")[0]
            if package not in {p for p, _ in APPS.values()}:
                return _err(f"Error: Activity class {{{component}}} does not exist.")
            self._launch(package)
            return _ok(f"Starting: Intent {{ cmp={component} }}\n")
        said = f"Starting: Intent {{ act={action} (has extras) }}\n"
        if action == "android.intent.action.SET_ALARM":
            self._set_alarm(extras)
        elif action == "android.intent.action.SET_TIMER":
            timer = self._next("timer")
            self.timers[timer] = Timer(timer, int(extras[EXTRA + "LENGTH"]), self.elapsed_ms,
                                       str(extras.get(EXTRA + "MESSAGE", "")))
        elif action == "android.intent.action.DISMISS_ALARM":
            hour, minute = extras.get(EXTRA + "HOUR"), extras.get(EXTRA + "MINUTES")
            for alarm in self.alarms.values():
                if (alarm.hour, alarm.minute) == (hour, minute):
                    alarm.enabled = False
        else:
            return _err(f"Error: Activity not started, unable to resolve Intent {{ act={action} }}")
        if not extras.get(EXTRA + "SKIP_UI"):
            self._launch(CLOCK)
        return _ok(said)

    def _set_alarm(self, extras: dict[str, Any]) -> None:
        hour, minute = int(extras[EXTRA + "HOUR"]), int(extras.get(EXTRA + "MINUTES", 0))
        label, days = str(extras.get(EXTRA + "MESSAGE", "")), tuple(extras.get(EXTRA + "DAYS", ()))
        for alarm in self.alarms.values():  # the Clock app reuses an identical alarm
            if (alarm.hour, alarm.minute, alarm.label, alarm.days) == (hour, minute, label, days):
                alarm.enabled = True
                return
        alarm_id = self._next("alarm")
        self.alarms[alarm_id] = Alarm(alarm_id, hour, minute, label, days)

    # -- dumpsys ------------------------------------------------------------------------------

    def _next_trigger(self, alarm: Alarm) -> datetime:
        now = datetime.fromtimestamp(self.now_ms / 1000, UTC)
        when = now.replace(hour=alarm.hour, minute=alarm.minute, second=0, microsecond=0)
        return when if when > now else when + timedelta(days=1)

    @staticmethod
    def _elapsed(ms: int) -> str:
        sign = "+" if ms >= 0 else "-"
        ms = abs(ms)
        h, rest = divmod(ms, 3_600_000)
        m, rest = divmod(rest, 60_000)
        s, ms = divmod(rest, 1000)
        return f"{sign}{h}h{m}m{s}s{ms}ms" if h else f"{sign}{m}m{s}s{ms}ms"

    def _cmd_dumpsys(self, args: list[str]) -> Output:
        if args[:1] != ["alarm"]:
            return _ok(f"Can't find service: {args[0] if args else ''}\n")
        now = datetime.fromtimestamp(self.now_ms / 1000, UTC)
        lines = ["Current Alarm Manager state:", "  Settings:", "    min_futurity=+5s0ms", "",
                 (f"  nowRTC={self.now_ms}={now:%Y-%m-%d %H:%M:%S}.000 "
                 f"nowELAPSED={self._elapsed(self.elapsed_ms)}"), ""]
        entries: list[tuple[int, list[str]]] = []
        tick = self.elapsed_ms + 60_000 - self.elapsed_ms % 60_000
        entries.append((tick, [
            f"ELAPSED #{{n}}: Alarm{{1a2b3c type 3 origWhen {tick} window 0 android}}",
            "    tag=*alarm*:android.intent.action.TIME_TICK",
            (f"    type=ELAPSED origWhen={self._elapsed(tick - self.elapsed_ms)} window=0 "
            "repeatInterval=0 count=0 flags=0x1"),
            "    operation=PendingIntent{5d6e: PendingIntentRecord{7f8 android broadcastIntent}}"]))
        for alarm in self.alarms.values():
            if not alarm.enabled:
                continue
            when = self._next_trigger(alarm)
            trigger = int(when.timestamp() * 1000)
            delta = trigger - self.now_ms
            entries.append((self.elapsed_ms + delta, [
                (f"RTC_WAKEUP #{{n}}: Alarm{{{alarm.alarm_id:07x} type 0 origWhen {trigger} "
                f"window 0 exactAllowReason=policy_permission {CLOCK}}}"),
                "    tag=*walarm*:com.android.deskclock.ALARM_ALERT",
                (f"    type=RTC_WAKEUP origWhen={when:%Y-%m-%d %H:%M:%S}.000 window=0 "
                "repeatInterval=0 count=0 flags=0x9"),
                f"    whenElapsed={self._elapsed(delta)} maxWhenElapsed={self._elapsed(delta)}",
                # AOSP 14 Alarm.dump: an "Alarm clock:" block, the trigger in local time
                "    Alarm clock:",
                f"      triggerTime={when:%Y-%m-%d %H:%M:%S}.000",
                f"      showIntent=PendingIntent{{d1e3: PendingIntentRecord{{9a0 {CLOCK} startActivity}}}}",
                (f"    operation=PendingIntent{{8bb2: PendingIntentRecord{{3c1 {CLOCK} "
                "broadcastIntent}}")]))
        for timer in self.timers.values():
            due = timer.started_elapsed_ms + timer.length_s * 1000
            left = due - self.elapsed_ms
            entries.append((due, [
                (f"ELAPSED_REALTIME_WAKEUP #{{n}}: Alarm{{{timer.timer_id + 0x100:07x} type 2 "
                f"origWhen {due} window 0 exactAllowReason=policy_permission {CLOCK}}}"),
                "    tag=*walarm*:com.android.deskclock.action.TIMER_EXPIRED",
                (f"    type=ELAPSED_REALTIME_WAKEUP origWhen={self._elapsed(left)} window=0 "
                "repeatInterval=0 count=0 flags=0x1"),
                f"    whenElapsed={self._elapsed(left)} maxWhenElapsed={self._elapsed(left)}",
                (f"    operation=PendingIntent{{4c5: PendingIntentRecord{{6d7 {CLOCK} "
                "broadcastIntent}}")]))
        entries.sort(key=lambda entry: entry[0])
        lines.append(f"  Pending alarms: {len(entries)}")
        for n, (_, block) in enumerate(entries):
            lines.append("  " + block[0].replace("{n}", str(n)))
            lines.extend(block[1:])
        lines += ["", "  Past-due non-wakeup alarms: (none)"]
        return _ok("\n".join(lines) + "\n")

    # -- content providers --------------------------------------------------------------------

    def _cmd_content(self, args: list[str]) -> Output:
        verb, opts = args[0], self._content_opts(args[1:])
        uri = opts["uri"]
        if uri.startswith(("content://sms", "content://mms")):
            return _err("Error while accessing provider:sms\njava.lang.SecurityException: "
                        "Permission Denial: opening provider com.android.providers.telephony."
                        "SmsProvider from ProcessRecord{1 2000:com.android.shell/u0a2} (pid=2, "
                        "uid=2000) requires android.permission.READ_SMS or "
                        "android.permission.WRITE_SMS")
        match = re.fullmatch(r"content://com\.android\.contacts/(raw_contacts|data)(\?.*)?", uri)
        if match is None:
            return _err(f"Error while accessing provider:{uri}\njava.lang.IllegalArgumentException:"
                        f" Unknown URL {uri}")
        table = self.raw_contacts if match.group(1) == "raw_contacts" else self.data
        where = _Where(opts.get("where"))
        live = [row for row in table.values() if where.matches(row) and self._visible(row)]
        if verb == "query":
            if not live:
                return _ok("No result found.\n")
            columns = opts["projection"].split(":") if "projection" in opts else None
            lines = []
            for n, row in enumerate(sorted(live, key=lambda r: r["_id"])):
                cells = [f"{c}={_text(row.get(c))}" for c in (columns or list(row))]
                lines.append(f"Row: {n} " + ", ".join(cells))
            return _ok("\n".join(lines) + "\n")
        if verb == "insert":
            binds = opts["binds"]
            if table is self.raw_contacts:
                raw = self._next("raw")
                self.raw_contacts[raw] = {"_id": raw, "contact_id": raw, "deleted": 0,
                                          "starred": int(binds.get("starred") or 0),
                                          "display_name": None, "account_name":
                                          binds.get("account_name"), "account_type":
                                          binds.get("account_type")}
            else:
                raw = int(binds["raw_contact_id"])
                if raw not in self.raw_contacts:
                    return _err("Error while accessing provider:com.android.contacts\n"
                                "java.lang.IllegalArgumentException: raw_contact_id is required")
                row = self._next("data")
                self.data[row] = {"_id": row, "raw_contact_id": raw,
                                  "mimetype": binds["mimetype"], "data1": binds.get("data1"),
                                  "data2": binds.get("data2")}
                self._rename(raw)
            return _ok()
        if verb == "update":
            for row in live:
                row.update({k: v for k, v in opts["binds"].items() if k != "_id"})
                if table is self.data:
                    self._rename(row["raw_contact_id"])
            return _ok()
        if verb == "delete":
            for row in live:
                if table is self.raw_contacts and row.get("display_name") in self.undeletable:
                    continue  # a read-only account's contact: the provider leaves it, exit 0
                if table is self.raw_contacts:
                    row["deleted"] = 1  # the provider keeps it until the sync adapter purges it
                else:
                    del self.data[row["_id"]]
            return _ok()
        return _err(f"Unsupported operation: {verb}")

    def _visible(self, row: dict[str, Any]) -> bool:
        raw = self.raw_contacts.get(row.get("raw_contact_id", -1))
        return raw is None or not raw["deleted"]

    def _rename(self, raw: int) -> None:
        names = [d["data1"] for d in self.data.values()
                 if d["raw_contact_id"] == raw and d["mimetype"] == NAME_MIME]
        self.raw_contacts[raw]["display_name"] = names[0] if names else None

    @staticmethod
    def _content_opts(args: list[str]) -> dict[str, Any]:
        opts: dict[str, Any] = {"binds": {}}
        i = 0
        while i < len(args):
            flag, value = args[i], args[i + 1]
            if flag == "--bind":
                column, kind, text = value.split(":", 2)
                opts["binds"][column] = (None if kind == "n" else int(text) if kind in ("i", "l")
                                         else text)
            elif flag in ("--uri", "--where", "--projection", "--sort", "--user"):
                opts[flag[2:]] = value
            else:
                raise ValueError(f"Unsupported argument: {flag}")
            i += 2
        return opts

    # -- input and the screen -----------------------------------------------------------------

    def _cmd_input(self, args: list[str]) -> Output:
        verb = args[0]
        if verb == "tap":
            self._tap(int(args[1]), int(args[2]))
        elif verb == "swipe":
            pass  # no screen here scrolls
        elif verb == "keyevent":
            for code in args[1:]:
                self._key(code)
        elif verb == "keycombination":
            if self.sdk < 33:
                return _err(f"Error: Unknown command: {verb}", 1)
        elif verb == "text":
            self.typed += args[1].replace("%s", " ")
        else:
            return _err(f"Error: Unknown command: {verb}", 1)
        return _ok()

    def _key(self, code: str) -> None:
        if code in ("3", "KEYCODE_HOME"):
            if self.foreground != LAUNCHER:
                self._resumed[self.foreground] = self.screen
            self.foreground, self.screen = LAUNCHER, "home"
        elif code in ("4", "KEYCODE_BACK"):
            parent = {"display": "settings", "network": "settings"}.get(self.screen)
            if parent is not None:
                self.screen = parent
            else:
                self.foreground, self.screen = LAUNCHER, "home"
        elif code in ("67", "KEYCODE_DEL"):
            self.typed = self.typed[:-1]

    def _tap(self, x: int, y: int) -> None:
        hit = None
        for element in self._render():
            b = element.bounds
            if b is not None and element.is_clickable and b.left <= x < b.right and b.top <= y < b.bottom:
                hit = element
        if hit is None:
            return
        rid = hit.resource_id or ""
        if self.screen == "home" and hit.text in APPS:
            self._launch(APPS[hit.text][0])
        elif self.screen == "settings" and hit.text == "Display":
            self.screen = "display"
        elif self.screen == "settings" and hit.text == "Network & internet":
            self.screen = "network"
        elif rid.endswith("switch_widget") and self.screen == "display":
            mode = self.settings["secure"]["ui_night_mode"]
            self.settings["secure"]["ui_night_mode"] = "1" if mode == "2" else "2"
        elif rid.endswith("switch_widget") and self.screen == "network":
            on = self.settings["global"]["airplane_mode_on"]
            self.settings["global"]["airplane_mode_on"] = "0" if on == "1" else "1"
        elif rid.endswith("onoff") and hit.bounds is not None and hit.bounds.top in self._alarm_rows:
            alarm = self.alarms[self._alarm_rows[hit.bounds.top]]
            alarm.enabled = not alarm.enabled

    def _render(self) -> list[UIElement]:
        w = self.width
        rows: list[UIElement] = []

        def add(text: str = "", *, rid: str = "", desc: str = "", clickable: bool = False,
                checkable: bool = False, checked: bool = False, cls: str = "android.widget.TextView",
                top: int | None = None, left: int = 0, right: int | None = None) -> None:
            y = top if top is not None else 200 + 160 * len(rows)
            rows.append(UIElement(
                text=text or None, content_description=desc or None, class_name=cls,
                resource_id=rid or None, package_name=self.foreground,
                bounds=Bounds(left=left, top=y, right=right or w, bottom=y + 140),
                is_clickable=clickable, is_checkable=checkable, is_checked=checked))

        if self.foreground == LAUNCHER:
            for n, label in enumerate(APPS):
                add(label, desc=label, clickable=True, top=1600 + 300 * (n // 4),
                    left=(n % 4) * w // 4, right=(n % 4 + 1) * w // 4)
        elif self.foreground == SETTINGS:
            s = self.settings
            # Stock switches carry no content-desc: the label is a sibling TextView in the row.
            if self.screen == "display":
                add("Display", rid=f"{SETTINGS}:id/title")
                add("Brightness level", rid="android:id/title", clickable=True)
                add("Dark theme", rid="android:id/title", clickable=True, right=w - 220)
                add(rid="android:id/switch_widget", cls="android.widget.Switch", clickable=True,
                    checkable=True, checked=s["secure"]["ui_night_mode"] == "2", left=w - 200,
                    top=rows[-1].bounds.top)
            elif self.screen == "network":
                add("Network & internet", rid=f"{SETTINGS}:id/title")
                add("Internet", rid="android:id/title", clickable=True)
                add("Wi\u2011Fi", rid="android:id/summary")  # AOSP writes a non-breaking hyphen
                add("Airplane mode", rid="android:id/title", clickable=True, right=w - 220)
                add(rid="android:id/switch_widget", cls="android.widget.Switch", clickable=True,
                    checkable=True, checked=s["global"]["airplane_mode_on"] == "1", left=w - 200,
                    top=rows[-1].bounds.top)
            else:
                add("Settings", rid=f"{SETTINGS}:id/title")
                for item in ("Network & internet", "Connected devices", "Apps", "Display",
                             "Battery", "Sound & vibration"):
                    add(item, rid="android:id/title", clickable=True)
        elif self.foreground == CLOCK:
            add("Alarm", rid=f"{CLOCK}:id/tab_menu_alarm", clickable=True)
            self._alarm_rows = {}
            for alarm in sorted(self.alarms.values(), key=lambda a: (a.hour, a.minute)):
                hour = alarm.hour % 12 or 12  # the stock clock: 12-hour with a narrow no-break space
                add(f"{hour}:{alarm.minute:02d}\u202f{'AM' if alarm.hour < 12 else 'PM'}",
                    rid=f"{CLOCK}:id/digital_clock", right=w - 220)
                top = rows[-1].bounds.top
                add(rid=f"{CLOCK}:id/onoff", cls="android.widget.Switch", clickable=True,
                    checkable=True, checked=alarm.enabled, left=w - 200, top=top)
                self._alarm_rows[top] = alarm.alarm_id
        elif self.foreground == CONTACTS:
            add("Contacts", rid=f"{CONTACTS}:id/toolbar")
            for raw in sorted(self.raw_contacts.values(), key=lambda r: r["display_name"] or ""):
                if not raw["deleted"]:
                    add(raw["display_name"] or "", rid=f"{CONTACTS}:id/cliv_name_textview",
                        clickable=True)
        else:
            add(self.foreground, rid="android:id/content")
        self._elements = rows
        return rows

    def _cmd_uiautomator(self, args: list[str]) -> Output:
        if args[:1] != ["dump"]:
            return _err("Usage: uiautomator dump [--compressed] [FILE]")
        path = args[1] if len(args) > 1 else "/sdcard/window_dump.xml"
        if self.dump_idle_failures > 0:
            self.dump_idle_failures -= 1
            return b"", b"ERROR: could not get idle state.\n", 0
        xml = render_hierarchy(self._render(), package=self.foreground)
        if path == "/dev/tty":
            return _ok(xml + f"{DUMP_TRAILER} /dev/tty\n")
        self.files[path] = xml.encode()
        return _ok(f"{DUMP_TRAILER} {path}\n")


def _text(value: Any) -> str:
    return "NULL" if value is None else str(value)


class _Where:
    """The selections this provider understands: `col=N`, `col='text'`, joined with AND."""

    _TERM = re.compile(r"\s*(\w+)\s*=\s*('(?:[^']|'')*'|-?\d+)\s*")

    def __init__(self, text: str | None) -> None:
        self.terms: list[tuple[str, str]] = []
        for part in re.split(r"\s+AND\s+", text or "", flags=re.IGNORECASE) if text else []:
            match = self._TERM.fullmatch(part)
            if match is None:
                raise ValueError(f"unsupported selection {part!r}")
            value = match.group(2)
            self.terms.append((match.group(1), value[1:-1].replace("''", "'")
                               if value.startswith("'") else value))

    def matches(self, row: dict[str, Any]) -> bool:
        return all(str(row.get(column)) == value for column, value in self.terms)
