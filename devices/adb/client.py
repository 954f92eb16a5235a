"""The one module that talks to adb: shell, pull and screencap with per-call timeouts and retries.

Every adb call of the runner goes through `AdbCall`. Failures are sorted into three kinds:
the device is gone (not found, offline, unauthorised, server unreachable) → retried, then
`DeviceLost`; the call timed out or its connection broke after the request could have run →
retried when the call is idempotent; a write that may have run is never sent again blindly (a tap
or a `content insert` would happen twice): the device is health-checked, then the caller's
`landed` read-back decides (it ran: done; it did not: sent again), and without one `CallTimedOut`
says it may have run; anything else the device reported → `DeviceError`. A shell
command that ran and exited non-zero is a `CommandFailed` raised by the caller (`check`).

adbutils is used through `NoSpawnClient`, which keeps its wire protocol but drops three habits
that matter here: it never runs `adb start-server` (adbutils does on every failed connect, on
the default port, whatever port was configured), it closes a finished connection at once
instead of sleeping 10 ms after a half-close, and it asks the server's version once per
client instead of once per shell call.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import adbutils
from adbutils._adb import AdbConnection
from adbutils.errors import AdbConnectionError, AdbError, AdbTimeout

from devices.adb.settings import AdbSettings
from devices.protocol import DeviceError, DeviceLost

__all__ = ["PNG_SIGNATURE", "AdbCall", "CallTimedOut", "CommandFailed", "NoSpawnClient",
           "ShellOutput"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Every PNG file starts with these 8 bytes; a screencap without them is not an image.
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

#: Substrings of adb server replies that mean the device itself is gone (not a bad command).
LOST_MARKERS = ("not found", "offline", "unauthorized", "no devices", "device still authorizing",
                "closed", "connection reset", "broken pipe", "connect to adb server failed")

#: The health check after an ambiguous timeout must be quick: the device either answers or not.
HEALTH_CHECK_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class ShellOutput:
    """What one shell command printed and how it exited."""

    command: str
    exit_code: int
    stdout: bytes
    stderr: bytes = b""

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")

    @property
    def error_text(self) -> str:
        return self.stderr.decode("utf-8", errors="replace")


class CommandFailed(DeviceError):
    """A shell command ran on the device and exited non-zero (the device itself is fine)."""

    def __init__(self, message: str, exit_code: int, output: str = "") -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.output = output


class CallTimedOut(DeviceError):
    """A non-idempotent adb call ran past its timeout; the device still answers afterwards."""


if not all(hasattr(AdbConnection, name) for name in ("_safe_connect", "_create_socket")):
    raise ImportError(f"adbutils {getattr(adbutils, '__version__', '?')} changed its connection "
                      f"class; install adbutils>=2.12,<3 (see pyproject.toml)")


class _NoSpawnConnection(AdbConnection):
    """An adbutils connection that never starts an adb server and closes without sleeping."""

    def _safe_connect(self) -> socket.socket:
        # adbutils falls back to `adb start-server` (default port) here; we only report.
        return self._create_socket()

    def close(self) -> None:
        conn = self._AdbConnection__conn  # type: ignore[attr-defined]
        if conn is None:
            return
        conn.close()  # the reply was read in full: no half-close and 10 ms sleep needed
        self._AdbConnection__conn = None


class NoSpawnClient(adbutils.AdbClient):
    """adbutils.AdbClient on `_NoSpawnConnection`, with the server version asked once."""

    def __init__(self, host: str, port: int, socket_timeout: float | None = None) -> None:
        super().__init__(host=host, port=port, socket_timeout=socket_timeout)
        self._timeout = socket_timeout
        self._version: int | None = None

    def make_connection(self, timeout: float | None = None) -> AdbConnection:
        conn = _NoSpawnConnection(self.host, self.port)
        limit = timeout or self._timeout
        if limit:
            conn.conn.settimeout(limit)
        return conn

    def server_version(self) -> int:
        if self._version is None:
            self._version = super().server_version()
        return self._version

    def forget_version(self) -> None:
        """After a lost connection the server may have been replaced by another version."""
        self._version = None


class _Lost(Exception):
    """Internal: the failure looked like a vanished device."""


class _TimedOut(Exception):
    """Internal: the failure was a timeout."""


def _classify(error: BaseException) -> type[Exception] | None:
    """Maps an adbutils/socket failure to _Lost, _TimedOut, or None (a real command error)."""
    if isinstance(error, (AdbTimeout, socket.timeout, TimeoutError)):
        return _TimedOut
    if isinstance(error, (AdbConnectionError, ConnectionError, EOFError)):
        return _Lost
    text = str(error).lower()
    if isinstance(error, (AdbError, OSError)) and any(m in text for m in LOST_MARKERS):
        return _Lost
    if isinstance(error, OSError):
        return _Lost
    return None


#: Words of an adb error that says the request never reached the device (safe to send again).
NOT_SENT_MARKERS = ("offline", "not found", "no devices", "unauthorized", "refused")


def _may_have_run(error: BaseException) -> bool:
    """Whether a failed call may have run on the device: its connection broke after the request
    could have been read (reset, EOF, broken pipe), not before it was sent."""
    if isinstance(error, ConnectionRefusedError):
        return False
    return not any(marker in str(error).lower() for marker in NOT_SENT_MARKERS)


class AdbCall:
    """Calls on one device through the adb server, with timeouts, retries and loss detection."""

    def __init__(self, settings: AdbSettings, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings
        self._sleep = sleep
        self._client = NoSpawnClient(settings.host, settings.port, settings.call_timeout_s)
        self._serial = settings.serial
        self._device: adbutils.AdbDevice | None = None
        self.calls = 0
        self.retried = 0
        self.read_back = 0  # writes whose connection broke and whose read-back showed they ran
        # Seconds and calls per kind of call ("shell", "pull", "push", "screencap", or a caller's
        # own label such as "dump"): where an action's time goes (bench/phone.py prints it).
        self.spent: dict[str, float] = {}
        self.counted: dict[str, int] = {}

    # -- device selection -------------------------------------------------------------------

    @property
    def serial(self) -> str:
        """The serial in use, resolved on first need when settings leave it unset."""
        if self._serial is None:
            self._serial = self._only_serial()
        return self._serial

    def _only_serial(self) -> str:
        listed = self.devices()
        ready = [s for s, state in listed if state == "device"]
        if len(ready) == 1:
            return ready[0]
        where = f"adb server {self.settings.host}:{self.settings.port}"
        if not listed:
            raise DeviceLost(f"no device is attached to the {where}; connect one (adb -P "
                             f"{self.settings.port} connect HOST:PORT, or USB) and check 'adb devices'")
        if not ready:
            states = ", ".join(f"{s} is {state}" for s, state in listed)
            raise DeviceLost(f"no device on the {where} is ready ({states}); unlock the phone and "
                             f"accept its USB debugging prompt, or reconnect it")
        raise DeviceLost(f"{len(ready)} ready devices on the {where} ({', '.join(ready)}); set "
                         f"FLYWHEEL_ADB_SERIAL to the one to use")

    def state(self) -> str | None:
        """The device's state on the server ('device', 'offline', 'unauthorized', …), or None
        when the server does not list it; a server that does not answer raises DeviceLost."""
        return next((state for s, state in self.devices() if s == self.serial), None)

    def _dev(self) -> adbutils.AdbDevice:
        if self._device is None:
            self._device = self._client.device(serial=self.serial)
        return self._device

    def devices(self) -> list[tuple[str, str]]:
        """(serial, state) of every device the adb server knows."""
        try:
            return [(info.serial, info.state) for info in self._client.list()]
        except (AdbError, OSError) as error:
            raise DeviceLost(f"the adb server at {self.settings.host}:{self.settings.port} did "
                             f"not answer ({error}); start it with 'adb -P {self.settings.port} start-server'") from None

    def not_ready(self) -> str | None:
        """Why this device cannot be driven now, in one sentence (no adb server, not listed,
        listed but not in state 'device'); None when it is ready."""
        try:
            state = self.state()
        except DeviceError as error:
            return str(error)
        if state is None:
            return (f"the adb server lists no phone {self.serial}; see `flywheel devices list` or "
                    f"'adb devices'")
        if state != "device":
            return (f"phone {self.serial} is {state}; unlock it and accept its USB debugging prompt, "
                    f"or reconnect it")
        return None

    def is_present(self) -> bool:
        """True when the device is listed by the server in state 'device'."""
        try:
            return any(s == self.serial and st == "device" for s, st in self.devices())
        except DeviceLost:
            return False

    # -- the calls ------------------------------------------------------------------------

    def shell(self, command: Sequence[str] | str, *, idempotent: bool = False,
              timeout_s: float | None = None, landed: Callable[[], bool] | None = None,
              kind: str = "shell") -> ShellOutput:
        """Runs one shell command (shell protocol v2, so stdout, stderr and exit code are kept).

        `landed` reads the state back after a write whose connection broke when it may have run:
        True means it ran (the call answers as a success with empty output), False that it did
        not (it is sent again); with no `landed`, such a write raises `CallTimedOut`."""
        args = list(command) if not isinstance(command, str) else command
        label = args if isinstance(args, str) else " ".join(args)
        limit = timeout_s or self.settings.call_timeout_s

        def run() -> ShellOutput:
            result = self._dev().shell2(args, timeout=limit, encoding=None, v2=True)
            # shell v1 (a device without shell_v2) only fills `output`; v2 splits the streams.
            split = bool(result.stdout or result.stderr)
            return ShellOutput(command=label, exit_code=result.returncode,
                               stdout=result.stdout if split else result.output,
                               stderr=result.stderr)

        ran = None if landed is None else (
            lambda: ShellOutput(command=label, exit_code=0, stdout=b"") if landed() else None)
        return self._call(f"shell '{label[:80]}'", run, idempotent=idempotent, recover=ran, kind=kind)

    def pull(self, path: str, *, kind: str = "pull") -> bytes:
        """The bytes of a device file, read over the sync protocol."""
        return self._call(f"pull {path}", lambda: self._dev().sync.read_bytes(path),
                          idempotent=True, kind=kind)

    def check(self, command: Sequence[str] | str, *, idempotent: bool = False,
              timeout_s: float | None = None, landed: Callable[[], bool] | None = None,
              kind: str = "shell") -> str:
        """Runs one shell command and returns its stdout; a non-zero exit is CommandFailed
        (`landed` and `kind` as in `shell`)."""
        out = self.shell(command, idempotent=idempotent, timeout_s=timeout_s, landed=landed,
                         kind=kind)
        if out.exit_code != 0:
            said = (out.error_text or out.text).strip()
            raise CommandFailed(f"'{out.command[:60]}' failed on {self._serial} (exit "
                                f"{out.exit_code}): {said[:200] or 'no output'}",
                                out.exit_code, said)
        return out.text

    def push(self, data: bytes, path: str) -> None:
        """Writes `data` to a device file over the sync protocol (mode 0644)."""
        self._call(f"push {path}", lambda: self._dev().sync.push(data, path, mode=0o644),
                   idempotent=True, kind="push")

    def screencap(self) -> bytes:
        """A PNG screenshot of the current screen."""
        out = self.shell(["screencap", "-p"], idempotent=True, kind="screencap")
        if not out.stdout.startswith(PNG_SIGNATURE):
            raise DeviceError(f"screencap on {self.serial} returned {len(out.stdout)} bytes that "
                              f"are not a PNG; check that the screen is on and unlocked")
        return out.stdout

    # -- retry engine ---------------------------------------------------------------------

    def _call(self, what: str, run: Callable[[], T], *, idempotent: bool,
              recover: Callable[[], T | None] | None = None, kind: str = "shell") -> T:
        started = time.perf_counter()
        try:
            return self._tries(what, run, idempotent=idempotent, recover=recover)
        finally:
            self.spent[kind] = self.spent.get(kind, 0.0) + time.perf_counter() - started
            self.counted[kind] = self.counted.get(kind, 0) + 1

    def _tries(self, what: str, run: Callable[[], T], *, idempotent: bool,
               recover: Callable[[], T | None] | None) -> T:
        tries = self.settings.retries + 1
        delay = self.settings.retry_backoff_s
        last: Exception | None = None
        for attempt in range(1, tries + 1):
            self.calls += 1
            try:
                return run()
            except (AdbError, OSError, EOFError) as error:
                kind = _classify(error)
                last = error
                if kind is None:
                    raise DeviceError(f"adb {what} on {self._serial} failed: {error}") from None
                if not idempotent and (kind is _TimedOut or _may_have_run(error)):
                    self._after_ambiguous_failure(what, error, timed_out=kind is _TimedOut,
                                                  read_back=recover is not None)
                    self._device = None
                    self._client.forget_version()
                    if recover is not None and (done := recover()) is not None:
                        self.read_back += 1
                        logger.warning("adb %s on %s: %s; the read-back shows it ran, so it is not "
                                       "sent again", what, self._serial, error)
                        return done
                    if kind is _TimedOut:  # it did not land yet, but a slow command may still run
                        raise CallTimedOut(
                            f"adb {what} on {self._serial} timed out after "
                            f"{self.settings.call_timeout_s}s and has not taken effect yet; it was "
                            "not sent again because it may still run; observe before acting again")
                logger.warning("adb %s on %s: %s (try %d of %d)", what, self._serial, error,
                               attempt, tries)
                self._device = None  # reopen the transport on the next try
                self._client.forget_version()
            if attempt < tries:
                self.retried += 1
                if delay:
                    self._sleep(delay)
                delay *= 2
        raise DeviceLost(
            f"device {self._serial} stopped answering: adb {what} failed {tries} times "
            f"(last error: {last}); reconnect the device and start a new episode") from None

    def _comes_back(self) -> bool:
        """Whether the device is listed again within the health-check time (a dropped TCP or USB
        link is reconnected by the adb server in a moment)."""
        deadline = time.monotonic() + HEALTH_CHECK_TIMEOUT_S
        while not self.is_present():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)
        return True

    def _after_ambiguous_failure(self, what: str, error: BaseException, *, timed_out: bool,
                                 read_back: bool = False) -> None:
        """A non-idempotent call timed out or lost its connection after it may have reached the
        device (a tap, a `content insert`): it may have run, so it is never repeated blindly.
        The device must still answer; then, with a `read_back`, the caller's read decides, and
        without one `CallTimedOut` tells the policy to observe the screen before acting again."""
        if not self._comes_back():
            raise DeviceLost(f"device {self._serial} disappeared while running adb {what}; "
                             f"reconnect it and start a new episode") from None
        try:
            self._dev().shell2(["true"], timeout=HEALTH_CHECK_TIMEOUT_S, v2=True)
        except (AdbError, OSError, EOFError):
            raise DeviceLost(f"device {self._serial} stopped answering during adb {what}; "
                             f"reconnect it and start a new episode") from None
        if read_back:
            return
        how = (f"timed out after {self.settings.call_timeout_s}s" if timed_out
               else f"lost its connection ({error})")
        raise CallTimedOut(f"adb {what} on {self._serial} {how} and was not sent again because it may "
                           f"have run; observe the screen before acting again")
