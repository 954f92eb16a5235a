"""AdbPhone: the Device protocol on a real Android phone or emulator, through the adb call module.

Two profiles (FLYWHEEL_ADB_PROFILE). `stock` (the default) drives Android as it ships: tools
go through devices.adb.stock (providers, `settings`, `cmd`, intents, `dumpsys`), open_app
launches the component `cmd package resolve-activity` names, and reset puts back what
Flywheel changed (devices.adb.ledger) instead of clearing apps. `companion` expects the
Flywheel companion apps (com.flywheel.*): tools go through devices.adb.tools and reset clears
them with `pm clear`.

GUI actions become `input` taps, swipes, text and key events; tool calls go through the
profile's tool runner; planner actions (memory, skills, delegation, answers) are not the
phone's: they run in devices.harness.Harness, which wraps it and builds the final state checkers
score from the phone's `device_state()` plus its own memory, log and answer. Observations are a `uiautomator dump` (pulled over sync, or read from /dev/tty with the
trailer stripped) plus a `screencap` PNG kept in the blob store; the screen size comes from
`wm size` and the foreground app from the dump's root package. A real device cannot be
forked (`supports_fork = False`): fork() raises DeviceError.
"""

from __future__ import annotations

import logging
import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from devices.adb import stock
from devices.adb.android_settings import ANDROID_SETTINGS
from devices.adb.client import AdbCall
from devices.adb.ledger import Ledger, converge, differences, load_ledger, save_ledger
from devices.adb.provider import (
    LAUNCHER_PACKAGE,
    PACKAGE_PREFIX,
    app_for_package,
    bind_args,
    package_for,
    parse_query_output,
    table_uri,
    where_id,
)
from devices.adb.settings import AdbSettings
from devices.adb.tools import AdbTools
from devices.adb.uixml import DUMP_TRAILER, parse_hierarchy, root_package, strip_dump_trailer
from devices.blobs import BlobStore
from devices.kit.apps import APPS, SETTINGS_SPEC, TABLES, resolve_app
from devices.kit.log import LogEntry
from devices.kit.steps import spend_step
from devices.protocol import DeviceError, DeviceLost, TaskInstance
from schemas.actions import (
    Click,
    InputText,
    KeyboardEnter,
    LongPress,
    NavigateBack,
    NavigateHome,
    OpenApp,
    Scroll,
    Swipe,
    Wait,
)
from schemas.observations import BlobRef, Bounds, Observation, ToolError, ToolResult, UIElement

__all__ = [
    "SCREEN_HEIGHT",
    "SCREEN_WIDTH",
    "AdbPhone",
    "AdbSnapshot",
    "escape_input_text",
    "foreground_app",
]

logger = logging.getLogger(__name__)

#: The sandbox's reference screen (1080x2400, as on the sim phone) for swipes without a target.
SCREEN_WIDTH, SCREEN_HEIGHT = 1080, 2400

#: How long `input swipe` holds a point to make a long press (Android's threshold is ~500 ms).
LONG_PRESS_MS = 1000

#: A scroll or swipe gesture's duration: long enough not to fling past whole pages.
SWIPE_MS = 300

#: Android key codes for the keys the action space uses.
KEY_HOME, KEY_BACK, KEY_ENTER, KEY_DEL, KEY_CTRL_LEFT, KEY_A = 3, 4, 66, 67, 113, 29

#: Longest command line sent as one batched shell call (far below Android's ARG_MAX of 128 KiB),
#: so a reset or restore costs a few adb round trips instead of one per row.
BATCH_CHARS = 8000

#: Characters `input text` cannot type (it only injects ASCII key events).
_PRINTABLE_ASCII = {chr(c) for c in range(0x20, 0x7F)}

#: KEYCODE_MOVE_END: clearing a field without `input keycombination` (API < 33) starts here.
KEY_MOVE_END = 123

#: `input keycombination` exists from Android 13 (API 33).
KEYCOMBINATION_SDK = 33

_WM_SIZE = re.compile(r"(Override|Physical) size: (\d+)x(\d+)")


def escape_input_text(text: str) -> str:
    """Text for `input text`: spaces become %s (the command's own escape). The argument list is
    shell-quoted by the adb module, so quotes, `&`, `;`, `$` and backslashes reach it intact.
    What `input text` cannot type is refused with the reason, never typed wrongly."""
    bad = sorted({c for c in text if c not in _PRINTABLE_ASCII})
    if bad:
        raise ValueError(f"input text can only type printable ASCII; {bad[0]!r} cannot be typed")
    if "%s" in text:
        raise ValueError("input text reads '%s' as a space, so the text '%s' cannot be typed")
    return text.replace(" ", "%s")


@dataclass(frozen=True)
class AdbSnapshot:
    """A real device's state as data: provider rows per table, settings, the GUI log."""

    tables: dict[str, tuple[dict[str, Any], ...]]
    settings: dict[str, Any]
    log: tuple[LogEntry, ...]
    done: bool
    step: int
    clock_ms: int


class AdbPhone:
    """A phone reached through adb. `supports_fork` is False: real devices cannot be copied."""

    supports_fork = False

    def __init__(self, device_id: str | None = None, *, settings: AdbSettings | None = None,
                 adb: AdbCall | None = None, blobs: BlobStore | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings or AdbSettings()
        if device_id is not None and self.settings.serial != device_id:
            self.settings = self.settings.model_copy(update={"serial": device_id})
        self.adb = adb or AdbCall(self.settings, sleep=sleep)
        self.device_id = device_id or self.adb.serial
        self.blobs = blobs or BlobStore(self.settings.blob_dir)
        self._sleep = sleep
        self.stock = self.settings.profile == "stock"
        self.tool_runner: AdbTools | stock.StockTools = (
            stock.StockTools(self.adb) if self.stock else AdbTools(self.adb))
        self._size: tuple[int, int] | None = None
        self._sdk: int | None = None
        self._launchable: dict[str, str] = {}
        self.log: list[LogEntry] = []  # GUI actions as run on the phone
        self.done = False
        self.step = 0
        self.clock_ms = 0
        self.max_steps = 30
        self._screen: list[UIElement] = []
        self._closed = False
        # The last UI dump while nothing has been sent to the phone since (None: dump again).
        # Back-to-back observations (the harness, a GUI oracle looking twice) reuse it.
        self._unchanged_dump: str | None = None
        self.dumps_reused = 0

    # -- catalogue ------------------------------------------------------------------------

    @property
    def tools(self) -> dict[str, Any]:
        return self.tool_runner.specs

    @property
    def apps(self) -> tuple[str, ...]:
        return tuple(stock.APP_PACKAGES) if self.stock else APPS

    def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Runs one tool outside an episode step (no clock advance, not logged)."""
        self._unchanged_dump = None
        return self.tool_runner.call(name, arguments)

    # -- Device protocol -------------------------------------------------------------------

    def reset(self, task: TaskInstance) -> Observation:
        """Puts the phone back and loads the task's state (stock: undo what Flywheel changed;
        companion: clear every Flywheel app and restore default settings)."""
        self._check_open()
        self._unchanged_dump = None
        if self.stock:
            # HOME alone leaves an app on its sub-page (Settings would resume on Display): every
            # app the stock profile drives is force-stopped, so each episode starts it fresh.
            self._batch([["am", "force-stop", package] for packages in stock.APP_PACKAGES.values()
                         for package in packages])
        self._key(KEY_HOME)
        if self.stock:
            self._reset_stock(task)
            return self._begin(task)
        self._batch([["pm", "clear", package_for(app)] for app, tables in TABLES.items()
                     if tables])
        initial = dict(task.initial_state)
        values = {key: spec[0] for key, spec in SETTINGS_SPEC.items()}
        overlay = initial.get("settings") or {}
        if not isinstance(overlay, dict) or set(overlay) - set(values):
            raise DeviceError(f"task {task.task_id} sets unknown settings "
                              f"{sorted(set(overlay) - set(values))}; fix its initial_state")
        values.update(overlay)
        self._write_settings(values)
        upserts: list[list[str]] = []
        for app, tables in initial.items():
            if app in ("settings", "memory", "user"):
                continue
            if app not in TABLES or not isinstance(tables, dict):
                raise DeviceError(f"task {task.task_id} names unknown app '{app}' in its "
                                  f"initial_state; use one of {', '.join(APPS)}")
            for table, rows in tables.items():
                if table not in TABLES[app]:
                    raise DeviceError(f"task {task.task_id} names unknown table '{app}.{table}'")
                for index, row in enumerate(rows or []):
                    row = dict(row)
                    row.setdefault("id", f"{task.task_id}-{app}-{table}-{index}")
                    upserts += self._upsert(app, table, row)
        self._batch(upserts)
        return self._begin(task)

    def _begin(self, task: TaskInstance) -> Observation:
        self.log = []
        self.done = False
        self.step = 0
        self.clock_ms = task.start_clock_ms
        self.max_steps = task.max_steps
        return self.observe()

    def observe(self) -> Observation:
        self._check_open()
        return self._observation()

    def act(self, action: Any) -> Observation:
        """One action; a lost device raises DeviceLost, every other failure is in the result."""
        self._check_open()
        if action.action_type in _HARNESS_ACTIONS:
            return self._observation(result=ToolResult(
                name=action.action_type, ok=False, error=ToolError(
                    code="unsupported", message=f"{action.action_type} is a harness action; run "
                    "the phone inside devices.harness.Harness to use it.")))
        if self.done:
            return self._observation(result=ToolResult(
                name=action.action_type, ok=False, error=ToolError(
                    code="conflict", message="The episode has ended; reset the device first.")))
        self.step += 1
        self.clock_ms += self.settings.step_ms
        if isinstance(action, Wait):
            self.clock_ms += int(action.seconds * 1000)
        self._unchanged_dump = None  # whatever the action sends may change the screen
        try:
            result = self._dispatch(action)
        except DeviceLost:
            raise
        except DeviceError as error:  # exit code, timeout or refusal: each has its own code
            result = stock.error_result(action.action_type, error)
        if self.step >= self.max_steps:
            self.done = True
        return self._observation(result=result)

    def advance(self) -> int:
        """Spends one step (counter and clock) with no effect on the phone: the harness calls it
        when it ran an action of its own. Returns the step."""
        return spend_step(self, self.settings.step_ms)

    # -- the stock profile's state ----------------------------------------------------------

    def _ledger(self) -> Ledger:
        """The phone's baseline, recorded on first contact."""
        path = self.settings.ledger_path
        ledger = load_ledger(self.adb, path)
        if ledger is None:
            ledger = Ledger.from_state(stock.read_device_state(self.adb))
            save_ledger(self.adb, path, ledger)
            logger.info("recorded %s's own state in %s (%d contacts, %d alarms)", self.device_id,
                        path, len(ledger.contacts), len(ledger.alarms))
        return ledger

    def _reset_stock(self, task: TaskInstance) -> None:
        initial = dict(task.initial_state)
        # memory and user are the harness's (Harness.reset keeps them); a bare phone skips them
        supported = {"contacts", "clock", "files", "settings", "memory", "user"}
        unknown = sorted(set(initial) - supported)
        if unknown:
            raise DeviceError(f"task {task.task_id} needs {', '.join(unknown)} state, which the "
                              f"stock profile cannot load on {self.device_id} (see "
                              f"devices.adb.stock.UNSUPPORTED)")
        ledger = self._ledger()
        target = Ledger(dict(ledger.contacts), list(ledger.alarms), dict(ledger.settings))
        overlay = initial.get("settings") or {}
        if not isinstance(overlay, dict) or set(overlay) - set(ledger.settings):
            raise DeviceError(f"task {task.task_id} sets unknown settings "
                              f"{sorted(set(overlay) - set(ledger.settings))}; fix its "
                              f"initial_state")
        target.settings.update(overlay)
        tables = initial.get("contacts") or {}
        for index, row in enumerate((tables.get("contacts") or []) if isinstance(tables, dict)
                                    else []):
            fields = {k: row.get(k) for k in ("name", "phone", "email", "company")}
            target.contacts[f"task-{index}"] = {**fields, "starred": bool(row.get("starred"))}
        clock = initial.get("clock") or {}
        for row in (clock.get("alarms") or []) if isinstance(clock, dict) else []:
            if row.get("enabled", True) and row.get("time") not in target.alarms:
                target.alarms.append(str(row["time"]))
        files = initial.get("files") or {}
        wanted: dict[str, int] = {}
        for row in (files.get("files") or []) if isinstance(files, dict) else []:
            wanted[f"{row['album']}/{row['name']}"] = int(row.get("size_kb") or 64)
        before = Ledger(dict(ledger.contacts), list(ledger.alarms), dict(ledger.settings))
        converge(self.adb, target, baseline=ledger)
        try:
            stock.place_files(self.adb, wanted)
        except stock.BadArguments as error:
            raise DeviceError(f"task {task.task_id} has a file the phone cannot hold: "
                              f"{error.message}") from None
        if ledger.contacts != before.contacts:
            save_ledger(self.adb, self.settings.ledger_path, ledger)
        left = differences(self.adb, target)
        if left:  # the runner reports it as reset_failed: the episode cannot start on this state
            raise DeviceError(f"the reset of {self.device_id} did not take; read back: "
                              f"{'; '.join(left)}")

    def device_state(self) -> dict[str, Any]:
        """The phone's part of a final state, read from the phone: tables by row id, settings
        and the clock. devices.harness.Harness.final_state() adds memory, log and answer."""
        self._check_open()
        if self.stock:
            state = stock.read_device_state(self.adb)
        else:
            snap = self.snapshot()
            state = {"tables": {}, "settings": dict(snap.settings)}
            for key, rows in snap.tables.items():
                app, table = key.split(".", 1)
                state["tables"].setdefault(app, {})[table] = {str(r["id"]): dict(r) for r in rows}
        state["clock_ms"] = self.clock_ms
        return state

    def snapshot(self) -> AdbSnapshot:
        self._check_open()
        if self.stock:
            state = stock.read_device_state(self.adb)
            tables = state["tables"]
            return AdbSnapshot(tables={
                "contacts.contacts": tuple(tables["contacts"]["contacts"].values()),
                "clock.alarms": tuple(tables["clock"]["alarms"].values()),
                "files.files": tuple(tables["files"]["files"].values())},
                settings=state["settings"],
                log=tuple(self.log), done=self.done, step=self.step,
                clock_ms=self.clock_ms)
        tables = {}
        for app, names in TABLES.items():
            for table in names:
                out = self._shell(["content", "query", "--uri", table_uri(app, table)],
                                  idempotent=True)
                tables[f"{app}.{table}"] = tuple(parse_query_output(out, app, table))
        values = {key: setting.from_android(self._shell(setting.read_command(), idempotent=True))
                  for key, setting in ANDROID_SETTINGS.items()}
        return AdbSnapshot(tables=tables, settings=values, log=tuple(self.log), done=self.done,
                           step=self.step, clock_ms=self.clock_ms)

    def restore(self, snapshot: AdbSnapshot) -> None:
        self._check_open()
        if not isinstance(snapshot, AdbSnapshot):
            raise DeviceError("restore needs a snapshot taken by AdbPhone.snapshot()")
        self._unchanged_dump = None
        if self.stock:
            converge(self.adb, Ledger(
                {str(r["id"]): dict(r) for r in snapshot.tables["contacts.contacts"]},
                sorted(r["time"] for r in snapshot.tables["clock.alarms"]),
                dict(snapshot.settings)))
            stock.place_files(self.adb, {r["id"]: r["size_kb"]
                                         for r in snapshot.tables["files.files"]})
            self.log, self.done = list(snapshot.log), snapshot.done
            self.step, self.clock_ms = snapshot.step, snapshot.clock_ms
            return
        commands: list[list[str]] = []
        for key, rows in snapshot.tables.items():
            app, table = key.split(".", 1)
            kept = {str(row.get("id")) for row in rows}
            current = parse_query_output(self._shell(
                ["content", "query", "--uri", table_uri(app, table)], idempotent=True), app, table)
            commands += [["content", "delete", "--uri", table_uri(app, table),
                          "--where", where_id(str(row["id"]))]
                         for row in current if str(row.get("id")) not in kept]
            for row in rows:
                commands += self._upsert(app, table, dict(row))
        self._batch(commands)
        self._write_settings(snapshot.settings)
        self.log, self.done = list(snapshot.log), snapshot.done
        self.step, self.clock_ms = snapshot.step, snapshot.clock_ms

    def fork(self) -> AdbPhone:
        raise DeviceError("a real device cannot be forked; snapshot it and restore the snapshot "
                          "on another AdbPhone instead")

    def close(self) -> None:
        self._closed = True

    # -- helpers ---------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise DeviceError(f"AdbPhone {self.device_id} is closed; create a new one")

    def _shell(self, command: list[str] | str, *, idempotent: bool) -> str:
        return self.adb.check(command, idempotent=idempotent)

    def screen_size(self) -> tuple[int, int]:
        """(width, height) from `wm size` (the override when one is set), read once."""
        if self._size is None:
            said = self._shell(["wm", "size"], idempotent=True)
            sizes = {kind: (int(w), int(h)) for kind, w, h in _WM_SIZE.findall(said)}
            size = sizes.get("Override") or sizes.get("Physical")
            if size is None:
                raise DeviceError(f"wm size on {self.device_id} printed no size "
                                  f"({said.strip()[:80]!r})")
            self._size = size
        return self._size

    def sdk(self) -> int:
        """The device's API level (ro.build.version.sdk), read once."""
        if self._sdk is None:
            said = self._shell(["getprop", "ro.build.version.sdk"], idempotent=True).strip()
            try:
                self._sdk = int(said)
            except ValueError:
                raise DeviceError(f"{self.device_id} reports API level {said!r}") from None
        return self._sdk

    def _component(self, app: str) -> str:
        """The launcher component of a stock app (by our name or a package), resolved by pm."""
        if app in self._launchable:
            return self._launchable[app]
        installed = {line.removeprefix("package:").strip() for line in self._shell(
            ["pm", "list", "packages"], idempotent=True).splitlines() if line.strip()}
        candidates = stock.APP_PACKAGES.get(app, (app,))
        for package in candidates:
            if package not in installed:
                continue
            said = self._shell(["cmd", "package", "resolve-activity", "--brief", "-c",
                                "android.intent.category.LAUNCHER", package], idempotent=True)
            lines = [line.strip() for line in said.splitlines() if "/" in line]
            if lines:
                self._launchable[app] = lines[-1]
                return lines[-1]
        raise _BadTarget(f"no installed app provides '{app}' on {self.device_id}; open one of "
                         f"{', '.join(sorted(stock.APP_PACKAGES))} or a launchable package name")

    def _batch(self, commands: list[list[str]]) -> None:
        """Runs idempotent commands joined with '&&' in as few shell calls as fit BATCH_CHARS."""
        chunk: list[str] = []
        size = 0
        for line in (shlex.join(command) for command in commands):
            if chunk and size + len(line) + 4 > BATCH_CHARS:
                self._shell(" && ".join(chunk), idempotent=True)
                chunk, size = [], 0
            chunk.append(line)
            size += len(line) + 4
        if chunk:
            self._shell(" && ".join(chunk), idempotent=True)

    def _key(self, code: int) -> None:
        self._shell(["input", "keyevent", str(code)], idempotent=False)

    @staticmethod
    def _upsert(app: str, table: str, row: dict[str, Any]) -> list[list[str]]:
        """Delete-then-insert by id: replaces a row, and is safe to repeat."""
        row["id"] = str(row["id"])
        return [["content", "delete", "--uri", table_uri(app, table), "--where", where_id(row["id"])],
                ["content", "insert", "--uri", table_uri(app, table), *bind_args(row)]]

    def _write_settings(self, values: dict[str, Any]) -> None:
        self._batch([command for key, value in values.items()
                     for command in ANDROID_SETTINGS[key].write_commands(value)])

    def _dump(self) -> str:
        if self.settings.dump_mode == "tty":
            return strip_dump_trailer(self.adb.check(["uiautomator", "dump", "/dev/tty"],
                                                     idempotent=True, kind="dump"))
        path = self.settings.dump_path
        # The old dump goes first and stderr is read too: AOSP 14 reports "ERROR: could not get
        # idle state." on stderr, exits 0 and leaves the previous file, a stale screen.
        out = self.adb.shell(f"rm -f {shlex.quote(path)}; uiautomator dump {shlex.quote(path)}",
                             idempotent=True, kind="dump")
        said = f"{out.text}{out.error_text}"
        if out.exit_code != 0 or "ERROR" in said or DUMP_TRAILER not in said:
            raise DeviceError(f"uiautomator dump failed on {self.device_id}: {said.strip()[:200] or 'no output'}")
        return self.adb.pull(path, kind="dump").decode("utf-8", errors="replace")

    def _observation(self, result: ToolResult | None = None) -> Observation:
        try:
            if self._unchanged_dump is None:
                self._unchanged_dump = self._dump()
            else:  # nothing was sent since that dump: the screen is the one it read
                self.dumps_reused += 1
            xml = self._unchanged_dump
            screen = parse_hierarchy(xml)
            package = root_package(xml)
        except ValueError as error:
            raise DeviceError(f"could not read the screen of {self.device_id}: {error}") from None
        self._screen = screen
        foreground = (stock.app_for_package(package) if self.stock else foreground_app(screen))
        shot: BlobRef | None = None
        if self.settings.screenshots:
            shot = self.blobs.put(self.adb.screencap(), media_type="image/png")
        message = result.error.message if result is not None and result.error else None
        return Observation(step=self.step, clock_ms=self.clock_ms, foreground_app=foreground,
                           screen=screen, screenshot=shot, result=result, message=message,
                           done=self.done)

    def _target(self, index: int | None, x: int | None, y: int | None) -> tuple[int, int]:
        if index is None:
            assert x is not None and y is not None
            return x, y
        if index >= len(self._screen) or self._screen[index].bounds is None:
            raise _BadTarget(f"there is no element {index} on screen (it shows "
                             f"{len(self._screen)} elements); observe again and pick another")
        return self._screen[index].bounds.center  # type: ignore[union-attr]

    def _region(self, index: int | None) -> Bounds:
        if index is not None and index < len(self._screen) and self._screen[index].bounds:
            return self._screen[index].bounds  # type: ignore[return-value]
        width, height = self.screen_size() if self.stock else (SCREEN_WIDTH, SCREEN_HEIGHT)
        return Bounds(left=0, top=0, right=width, bottom=height)

    def _gesture(self, region: Bounds, finger: str) -> None:
        """A swipe across the middle half of `region` with the finger moving `finger`."""
        cx, cy = region.center
        dx = (region.right - region.left) // 4
        dy = (region.bottom - region.top) // 4
        start, end = {"up": ((cx, cy + dy), (cx, cy - dy)), "down": ((cx, cy - dy), (cx, cy + dy)),
                      "left": ((cx + dx, cy), (cx - dx, cy)),
                      "right": ((cx - dx, cy), (cx + dx, cy))}[finger]
        self._shell(["input", "swipe", *map(str, (*start, *end)), str(SWIPE_MS)], idempotent=False)

    def _dispatch(self, action: Any) -> ToolResult | None:
        name = action.action_type
        try:
            if isinstance(action, Click):
                x, y = self._target(action.index, action.x, action.y)
                self._shell(["input", "tap", str(x), str(y)], idempotent=False)
            elif isinstance(action, LongPress):
                x, y = self._target(action.index, action.x, action.y)
                self._shell(["input", "swipe", str(x), str(y), str(x), str(y), str(LONG_PRESS_MS)],
                            idempotent=False)
            elif isinstance(action, InputText):
                text = escape_input_text(action.text)
                if action.index is not None:
                    x, y = self._target(action.index, None, None)
                    self._shell(["input", "tap", str(x), str(y)], idempotent=False)
                if action.clear:
                    self._clear_field(action.index)
                self._shell(["input", "text", text], idempotent=False)
            elif isinstance(action, KeyboardEnter):
                self._key(KEY_ENTER)
            elif isinstance(action, Scroll):
                opposite = {"up": "down", "down": "up", "left": "right", "right": "left"}
                self._gesture(self._region(action.index), opposite[action.direction])
            elif isinstance(action, Swipe):
                self._gesture(self._region(None), action.direction)
            elif isinstance(action, NavigateHome):
                self._key(KEY_HOME)
            elif isinstance(action, NavigateBack):
                self._key(KEY_BACK)
            elif isinstance(action, OpenApp) and self.stock:
                name = action.app_name.strip()
                app = name.lower() if name.lower() in stock.APP_PACKAGES else name
                if app not in stock.APP_PACKAGES and "." not in app:
                    raise _BadTarget(f"there is no app named '{name}'; open one of "
                                     f"{', '.join(sorted(stock.APP_PACKAGES))} or a package name")
                self._shell(["am", "start", "-n", self._component(app)], idempotent=False)
            elif isinstance(action, OpenApp):
                app = resolve_app(action.app_name)
                if app is None:
                    raise _BadTarget(f"there is no app named '{action.app_name}'; open one of "
                                     f"{', '.join(APPS)}")
                self._shell(["monkey", "-p", package_for(app), "-c",
                             "android.intent.category.LAUNCHER", "1"], idempotent=False)
            elif isinstance(action, Wait):
                if self.settings.wait_scale:
                    self._sleep(action.seconds * self.settings.wait_scale)
            else:
                return self.tool_runner.call(action.name, dict(action.arguments))
        except (_BadTarget, ValueError) as error:
            self.log.append(_gui_entry(self.step, action, ok=False))
            return ToolResult(name=name, ok=False,
                              error=ToolError(code="bad_arguments", message=str(error)))
        self.log.append(_gui_entry(self.step, action))
        return None

    def _clear_field(self, index: int | None) -> None:
        """Empties the focused field: select-all + delete from API 33, else end + deletes."""
        if not self.stock or self.sdk() >= KEYCOMBINATION_SDK:
            self._shell(["input", "keycombination", str(KEY_CTRL_LEFT), str(KEY_A)],
                        idempotent=True)
            self._key(KEY_DEL)
            return
        current = self._screen[index].text if index is not None and index < len(
            self._screen) else None
        if current is None:
            raise _BadTarget("this Android (API < 33) has no select-all key combination, so a "
                             "field can only be cleared when the action names it by index")
        self._shell(["input", "keyevent", str(KEY_MOVE_END), *[str(KEY_DEL)] * len(current)],
                    idempotent=False)


# Planner actions: the harness runs them; the phone refuses them unrun.
_HARNESS_ACTIONS = frozenset({"memory_read", "memory_write", "use_skill", "delegate", "ask_user",
                              "answer", "finish", "status"})


class _BadTarget(ValueError):
    """The action names an element or app that is not there."""


def _gui_entry(step: int, action: Any, ok: bool = True) -> LogEntry:
    arguments = action.model_dump(mode="json", exclude={"action_type"}, exclude_none=True)
    return LogEntry(step, "gui", action.action_type, arguments, ok)


def foreground_app(screen: list[UIElement]) -> str | None:
    """The app in front: the first Flywheel package on screen ('home' for the launcher)."""
    for element in screen:
        package = element.package_name or ""
        if package == LAUNCHER_PACKAGE:
            return "home"
        if package.startswith(PACKAGE_PREFIX):
            return app_for_package(package)
    return None
