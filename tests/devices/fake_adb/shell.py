"""A fake device behind the fake adb server: interprets the shell commands AdbPhone sends
(input, am, monkey, pm, content, settings, svc, uiautomator, screencap) against a SimPhone."""

from __future__ import annotations

import json
import logging
import shlex
import threading
from collections.abc import Callable
from typing import Any

from devices.adb.android_settings import ANDROID_SETTINGS, by_android_key
from devices.adb.provider import (
    LAUNCHER_PACKAGE,
    app_for_package,
    format_call_output,
    format_query_rows,
    package_for,
    parse_bind,
    parse_uri,
    parse_where_id,
)
from devices.adb.uixml import DUMP_TRAILER, render_hierarchy
from devices.sim.state import TABLES
from devices.sim.world import default_world
from schemas import actions as act
from tests.devices.fake_adb.png import screen_png

__all__ = ["FakeDevice", "run_sequence"]

logger = logging.getLogger(__name__)

#: Android key codes AdbPhone uses, by name and by number.
KEYCODES = {"KEYCODE_HOME": "home", "3": "home", "KEYCODE_BACK": "back", "4": "back",
            "KEYCODE_ENTER": "enter", "66": "enter", "KEYCODE_DEL": "del", "67": "del"}

#: A swipe held at one point at least this long is a long press.
LONG_PRESS_MS = 500

#: Calendar.DAY_OF_WEEK → sandbox weekday.
DAYS_BY_NUMBER = {1: "sun", 2: "mon", 3: "tue", 4: "wed", 5: "thu", 6: "fri", 7: "sat"}

Output = tuple[bytes, bytes, int]


def run_sequence(tokens: list[str], one: Callable[[list[str]], Output], *,
                 status: bool = False) -> Output:
    """Runs a shell line's tokens, commands joined by ';' and '&&', each through `one`: the
    joined output and the last exit code; with `status`, `$?` in a command is the code before."""
    out, err, code = b"", b"", 0
    argv: list[str] = []
    for token in [*tokens, ";"]:
        if token in (";", "&&"):
            if argv:
                if status:
                    argv = [a.replace("$?", str(code)) for a in argv]
                o, e, code = one(argv)
                out, err = out + o, err + e
            argv = []
            if token == "&&" and code != 0:
                break
        else:
            argv.append(token)
    return out, err, code


class FakeDevice:
    """One phone: a SimPhone, a small file system, and a shell that drives them."""

    def __init__(self, phone: Any) -> None:
        self.phone = phone
        self.files: dict[str, bytes] = {}
        self.history: list[str] = []
        self.mtime = 1_767_254_400
        self._select_all = False
        self._clear_next_text = False
        self._lock = threading.Lock()

    def is_dir(self, path: str) -> bool:
        prefix = path.rstrip("/") + "/"
        return path in ("/", "/sdcard", "/data/local/tmp") or any(
            name.startswith(prefix) for name in self.files)

    # -- entry point ------------------------------------------------------------------------

    def run(self, command: str) -> Output:
        """Runs one shell command line (';' and '&&' sequences allowed)."""
        with self._lock:
            self.history.append(command)
            lexer = shlex.shlex(command, posix=True, punctuation_chars=";&")
            lexer.whitespace_split = True
            tokens = list(lexer)
            return run_sequence(tokens, self._one)

    def _one(self, argv: list[str]) -> Output:
        handler = getattr(self, "_cmd_" + argv[0].replace("-", "_"), None)
        if handler is None:
            return b"", f"/system/bin/sh: {argv[0]}: inaccessible or not found\n".encode(), 127
        try:
            return handler(argv[1:])
        except (ValueError, KeyError, IndexError) as error:
            return b"", f"Error: {error}\n".encode(), 1

    # -- trivial commands -------------------------------------------------------------------

    def _cmd_true(self, args: list[str]) -> Output:
        return b"", b"", 0

    def _cmd_echo(self, args: list[str]) -> Output:
        return (" ".join(args) + "\n").encode(), b"", 0

    def _cmd_rm(self, args: list[str]) -> Output:
        for path in args:
            if not path.startswith("-"):
                self.files.pop(path, None)
        return b"", b"", 0

    def _cmd_getprop(self, args: list[str]) -> Output:
        props = {"ro.product.model": "SimPhone", "ro.build.version.sdk": "34"}
        return (props.get(args[0], "") + "\n").encode() if args else b"", b"", 0

    # -- GUI --------------------------------------------------------------------------------

    def _act(self, action: Any) -> None:
        # The adb runner keeps the episode's steps and limit; the phone behind it never ends.
        state = self.phone.state
        state.done, state.max_steps = False, 10**9
        self.phone.act(action)

    def _cmd_input(self, args: list[str]) -> Output:
        verb = args[0]
        if verb == "tap":
            self._act(act.Click(x=int(float(args[1])), y=int(float(args[2]))))
        elif verb == "swipe":
            x1, y1, x2, y2 = (int(float(v)) for v in args[1:5])
            duration = int(args[5]) if len(args) > 5 else 300
            if (x1, y1) == (x2, y2):
                if duration >= LONG_PRESS_MS:
                    self._act(act.LongPress(x=x1, y=y1))
                else:
                    self._act(act.Click(x=x1, y=y1))
            else:
                dx, dy = x2 - x1, y2 - y1
                # Content moves opposite to the finger: a finger moving up scrolls down.
                if abs(dy) >= abs(dx):
                    direction = "down" if dy < 0 else "up"
                else:
                    direction = "right" if dx < 0 else "left"
                self._act(act.Scroll(direction=direction))
        elif verb == "text":
            text = args[1].replace("%s", " ")
            self._act(act.InputText(text=text, clear=self._clear_next_text))
            self._clear_next_text = False
        elif verb == "keycombination":
            self._select_all = args[1:] == ["113", "29"]
        elif verb == "keyevent":
            key = KEYCODES.get(args[-1])
            if key == "home":
                self._act(act.NavigateHome())
            elif key == "back":
                self._act(act.NavigateBack())
            elif key == "enter":
                self._act(act.KeyboardEnter())
            elif key == "del" and self._select_all:
                self._clear_next_text = True
            self._select_all = False
        else:
            return b"", f"Error: Unknown command: {verb}\n".encode(), 1
        return b"", b"", 0

    def _open(self, package: str) -> Output:
        app = app_for_package(package)
        if app is None or app not in TABLES:
            return b"", f"Error: Activity not started, unknown package {package}\n".encode(), 1
        self._act(act.OpenApp(app_name=app))
        return f"Starting: Intent {{ cmp={package}/.MainActivity }}\n".encode(), b"", 0

    def _cmd_monkey(self, args: list[str]) -> Output:
        return self._open(args[args.index("-p") + 1])

    def _cmd_am(self, args: list[str]) -> Output:
        verb = args[0]
        if verb == "broadcast" or verb == "force-stop":
            return b"Broadcast completed: result=0\n" if verb == "broadcast" else b"", b"", 0
        if verb != "start":
            return b"", f"Error: unknown am command {verb}\n".encode(), 1
        if "-n" in args:
            return self._open(args[args.index("-n") + 1].split("/", 1)[0])
        action = args[args.index("-a") + 1] if "-a" in args else ""
        extras = self._extras(args)
        prefix = "android.intent.extra.alarm."
        if action == "android.intent.action.SET_ALARM":
            arguments: dict[str, Any] = {
                "time": f"{extras[prefix + 'HOUR']:02d}:{extras[prefix + 'MINUTES']:02d}"}
            if prefix + "MESSAGE" in extras:
                arguments["label"] = extras[prefix + "MESSAGE"]
            if prefix + "DAYS" in extras:
                arguments["days"] = [DAYS_BY_NUMBER[d] for d in extras[prefix + "DAYS"]]
            return self._intent_tool("clock.set_alarm", arguments, action)
        if action == "android.intent.action.SET_TIMER":
            arguments = {"seconds": extras[prefix + "LENGTH"]}
            if prefix + "MESSAGE" in extras:
                arguments["label"] = extras[prefix + "MESSAGE"]
            return self._intent_tool("clock.start_timer", arguments, action)
        return b"", f"Error: Activity not started, unable to resolve Intent {{ act={action} }}\n"\
            .encode(), 1

    @staticmethod
    def _extras(args: list[str]) -> dict[str, Any]:
        extras: dict[str, Any] = {}
        for i, flag in enumerate(args):
            if flag in ("--es", "--ei", "--ez", "--eia"):
                key, value = args[i + 1], args[i + 2]
                extras[key] = {"--es": lambda v: v, "--ei": int,
                               "--ez": lambda v: v == "true",
                               "--eia": lambda v: [int(x) for x in v.split(",")]}[flag](value)
        return extras

    def _intent_tool(self, tool: str, arguments: dict[str, Any], action: str) -> Output:
        result = self.phone.call_tool(tool, arguments)
        if not result.ok:
            return b"", f"Error: {result.error.message}\n".encode(), 1
        return f"Starting: Intent {{ act={action} }}\n".encode(), b"", 0

    def _cmd_pm(self, args: list[str]) -> Output:
        if args[0] != "clear":
            return b"", f"Error: unknown pm command {args[0]}\n".encode(), 1
        app = app_for_package(args[1])
        if app is None or app not in TABLES:
            return b"Failed\n", b"", 1
        state = self.phone.state
        world = default_world()
        for table in TABLES[app]:
            for row_id in list(state.table(app, table)):
                state.delete(app, table, row_id)
            for row in world.get(app, {}).get(table, []):
                state.put(app, table, dict(row))
        return b"Success\n", b"", 0

    # -- content providers ------------------------------------------------------------------

    @staticmethod
    def _option(args: list[str], name: str) -> str | None:
        return args[args.index(name) + 1] if name in args else None

    def _cmd_content(self, args: list[str]) -> Output:
        verb = args[0]
        app, table = parse_uri(self._option(args, "--uri") or "")
        if verb == "call":
            method = self._option(args, "--method")
            arg = self._option(args, "--arg") or "{}"
            result = self.phone.call_tool(f"{app}.{method}", json.loads(arg))
            payload = result.model_dump(mode="json", exclude={"name"})
            return format_call_output(payload).encode(), b"", 0
        if table is None or table not in TABLES.get(app, {}):
            return b"", f"Error: unknown URI {self._option(args, '--uri')}\n".encode(), 1
        state = self.phone.state
        where = self._option(args, "--where")
        row_id = parse_where_id(where) if where else None
        binds = dict(parse_bind(args[i + 1], app, table)
                     for i, flag in enumerate(args) if flag == "--bind")
        if verb == "query":
            rows = [r for r in state.rows(app, table) if row_id is None or r["id"] == row_id]
            return format_query_rows(rows).encode(), b"", 0
        if verb == "insert":
            binds.setdefault("id", state.new_id(app, table))
            state.put(app, table, binds)
            return b"", b"", 0
        if verb == "update":
            if row_id is not None and state.get(app, table, row_id) is not None:
                state.update(app, table, row_id, binds)
            return b"", b"", 0
        if verb == "delete":
            targets = [row_id] if row_id is not None else list(state.table(app, table))
            for target in targets:
                if state.get(app, table, target) is not None:
                    state.delete(app, table, target)
            return b"", b"", 0
        return b"", f"Error: unknown content command {verb}\n".encode(), 1

    # -- settings ---------------------------------------------------------------------------

    def _cmd_settings(self, args: list[str]) -> Output:
        verb, namespace, key = args[0], args[1], args[2]
        setting = by_android_key(namespace, key)
        state = self.phone.state
        if verb == "get":
            if setting is None:
                return b"null\n", b"", 0
            return (setting.to_android(state.setting(setting.key)) + "\n").encode(), b"", 0
        if verb == "put":
            if setting is not None:
                value = setting.from_android(args[3])
                state.set_setting(setting.key, value)
            return b"", b"", 0
        return b"", f"Error: unknown settings command {verb}\n".encode(), 1

    def _cmd_svc(self, args: list[str]) -> Output:
        service, verb = args[0], args[1]
        if service not in ANDROID_SETTINGS or verb not in ("enable", "disable"):
            return b"", f"Error: unknown svc command {service} {verb}\n".encode(), 1
        self.phone.state.set_setting(service, verb == "enable")
        return b"", b"", 0

    # -- observation ------------------------------------------------------------------------

    def _dump(self) -> str:
        observation = self.phone.observe()
        package = (package_for(observation.foreground_app) if observation.foreground_app
                   else LAUNCHER_PACKAGE)
        return render_hierarchy(observation.screen, package=package)

    def _cmd_uiautomator(self, args: list[str]) -> Output:
        if not args or args[0] != "dump":
            return b"", b"Error: unknown uiautomator command\n", 1
        path = next((a for a in args[1:] if not a.startswith("-")), "/sdcard/window_dump.xml")
        xml = self._dump()
        if path == "/dev/tty":
            return f"{xml}{DUMP_TRAILER} /dev/tty\n".encode(), b"", 0
        self.files[path] = xml.encode()
        return f"{DUMP_TRAILER} {path}\n".encode(), b"", 0

    def _cmd_screencap(self, args: list[str]) -> Output:
        png = screen_png(self._dump().encode())
        path = next((a for a in args if not a.startswith("-")), None)
        if path:
            self.files[path] = png
            return b"", b"", 0
        return png, b"", 0
