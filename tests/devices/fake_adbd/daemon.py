"""The device side of adb over TCP (what `adbd` speaks after `adb connect HOST:PORT`).

Messages are a 24-byte header (command, arg0, arg1, payload length, payload checksum, magic =
command ^ 0xffffffff) plus the payload. The host opens with CNXN and the device answers CNXN
with its banner (no AUTH, no TLS: like an emulator or `ro.adb.secure=0`). Each service is a
stream: OPEN(local, 0, "service\\0") → OKAY(ours, local); data flows as WRTE, each answered by
OKAY before the next is sent (no delayed acks); CLSE ends it. Services: `shell:` (v1: raw
output, then close), `shell,v2[,...]:` (packets id/len/data: 1 stdout, 2 stderr, 3 exit),
`exec:` and `sync:` (STAT/STA2/LIST/LST2/RECV/SEND/QUIT). A device built with features lacking
`shell_v2` is an old phone: clients must fall back to shell v1.
"""

from __future__ import annotations

import logging
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import Self

__all__ = ["FEATURES", "FakeAdbd", "ShellRunner"]

logger = logging.getLogger(__name__)

A_SYNC, A_CNXN, A_OPEN, A_OKAY = 0x434E5953, 0x4E584E43, 0x4E45504F, 0x59414B4F
A_CLSE, A_WRTE, A_AUTH = 0x45534C43, 0x45545257, 0x48545541

#: Protocol version 0x01000001: payload checksums may be zero (the host skips them).
A_VERSION = 0x01000001
#: Largest payload we send in one WRTE (the host's own max is 1 MiB; 256 KiB is adbd's default).
MAX_PAYLOAD = 256 * 1024
#: Sync DATA chunks are at most 64 KiB in the real protocol.
SYNC_CHUNK = 64 * 1024
#: What the device claims (as in an Android 14 banner, minus TLS and delayed acks).
FEATURES = "shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir,apex,abb,abb_exec,fixed_push_symlink_timestamp"

S_IFREG, S_IFDIR = 0o100000, 0o040000

#: Runs one shell command line → (stdout, stderr, exit code).
ShellRunner = Callable[[str], tuple[bytes, bytes, int]]


class _Closed(Exception):
    """The host hung up."""


def _header(command: int, arg0: int, arg1: int, payload: bytes) -> bytes:
    return struct.pack("<6I", command, arg0, arg1, len(payload), sum(payload) & 0xFFFFFFFF,
                       command ^ 0xFFFFFFFF)


class _Stream:
    """One open service: its ids, the host's writes, and the ack the device waits for."""

    def __init__(self, local: int, remote: int) -> None:
        self.local, self.remote = local, remote
        self.acked = threading.Event()
        self.inbox = bytearray()
        self.has_data = threading.Condition()
        self.closed = False


class _Link:
    """One host connection (the adb server's transport to us)."""

    def __init__(self, daemon: FakeAdbd, sock: socket.socket) -> None:
        self.daemon, self.sock = daemon, sock
        self.send_lock = threading.Lock()
        self.streams: dict[int, _Stream] = {}
        self.next_id = 1

    def send(self, command: int, arg0: int, arg1: int, payload: bytes = b"") -> None:
        with self.send_lock:
            self.sock.sendall(_header(command, arg0, arg1, payload) + payload)

    def read_message(self) -> tuple[int, int, int, bytes]:
        head = self._exact(24)
        command, arg0, arg1, length, _check, magic = struct.unpack("<6I", head)
        if magic != command ^ 0xFFFFFFFF:
            raise _Closed(f"bad magic in message {command:#x}")
        return command, arg0, arg1, self._exact(length) if length else b""

    def _exact(self, n: int) -> bytes:
        data = bytearray()
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise _Closed("host closed the connection")
            data += chunk
        return bytes(data)

    # -- the reader loop ----------------------------------------------------------------

    def serve(self) -> None:
        try:
            while True:
                command, arg0, arg1, payload = self.read_message()
                if command == A_CNXN:
                    banner = (f"device::ro.product.name={self.daemon.product};ro.product.model="
                              f"{self.daemon.model};ro.product.device={self.daemon.product};"
                              f"features={self.daemon.features}")
                    self.send(A_CNXN, A_VERSION, MAX_PAYLOAD, banner.encode())
                elif command == A_OPEN:
                    self._open(arg0, payload.rstrip(b"\0").decode("utf-8", errors="replace"))
                elif command == A_OKAY:
                    stream = self.streams.get(arg1)
                    if stream is not None:
                        stream.remote = arg0
                        stream.acked.set()
                elif command == A_WRTE:
                    stream = self.streams.get(arg1)
                    if stream is not None:
                        with stream.has_data:
                            stream.inbox += payload
                            stream.has_data.notify_all()
                        self.send(A_OKAY, stream.local, stream.remote)
                elif command == A_CLSE:
                    stream = self.streams.pop(arg1, None)
                    if stream is not None:
                        self._mark_closed(stream)
        except (_Closed, OSError):
            pass
        finally:
            for stream in list(self.streams.values()):
                self._mark_closed(stream)
            self.streams.clear()
            try:
                self.sock.close()
            except OSError:
                pass

    @staticmethod
    def _mark_closed(stream: _Stream) -> None:
        with stream.has_data:
            stream.closed = True
            stream.has_data.notify_all()
        stream.acked.set()

    def _open(self, remote: int, service: str) -> None:
        local = self.next_id
        self.next_id += 1
        stream = _Stream(local, remote)
        self.streams[local] = stream
        self.daemon.services.append(service)
        self.send(A_OKAY, local, remote)
        threading.Thread(target=self._run_service, args=(stream, service), daemon=True,
                         name=f"fake-adbd-{service[:20]}").start()

    # -- services -----------------------------------------------------------------------

    def _run_service(self, stream: _Stream, service: str) -> None:
        try:
            self.daemon.maybe_stall()
            if service.startswith("shell") and ":" in service:
                options, _, command = service.partition(":")
                v2 = "v2" in options.split(",")[1:]
                if self.daemon.maybe_drop(command, ran=False):  # the link dies before it runs
                    self.sock.shutdown(socket.SHUT_RDWR)
                    return
                out, err, code = self.daemon.shell(command)
                if self.daemon.maybe_drop(command, ran=True):  # it ran; the link dies before the answer
                    self.sock.shutdown(socket.SHUT_RDWR)
                    return
                if v2:
                    self.write(stream, _packet(1, out) + _packet(2, err) + _packet(3, bytes([code & 0xFF])))
                else:
                    self.write(stream, out + err)
            elif service.startswith("exec:"):
                out, err, _code = self.daemon.shell(service[5:])
                self.write(stream, out)
            elif service.startswith("sync:"):
                self._sync(stream)
            else:
                logger.info("fake adbd refuses service %r", service)
        except (_Closed, OSError):
            return
        except Exception:  # a bug in the fake: end the stream as a crashed command would
            logger.exception("fake adbd service %r crashed", service)
        if not stream.closed:
            self.streams.pop(stream.local, None)
            try:
                self.send(A_CLSE, stream.local, stream.remote)
            except OSError:
                pass

    def write(self, stream: _Stream, data: bytes) -> None:
        """Sends `data` as WRTE messages, each waiting for the host's OKAY."""
        for start in range(0, len(data), MAX_PAYLOAD):
            if stream.closed:
                raise _Closed("stream closed by the host")
            stream.acked.clear()
            self.send(A_WRTE, stream.local, stream.remote, data[start:start + MAX_PAYLOAD])
            if not stream.acked.wait(30):
                raise _Closed("the host never acknowledged a write")

    def read(self, stream: _Stream, n: int) -> bytes:
        with stream.has_data:
            while len(stream.inbox) < n:
                if stream.closed:
                    raise _Closed("stream closed mid-request")
                stream.has_data.wait(30)
            data = bytes(stream.inbox[:n])
            del stream.inbox[:n]
            return data

    def _sync(self, stream: _Stream) -> None:
        files = self.daemon.files
        while True:
            command = self.read(stream, 4).decode("ascii", errors="replace")
            length = struct.unpack("<I", self.read(stream, 4))[0]
            if command == "QUIT":
                return
            path = self.read(stream, length).decode("utf-8", errors="replace")
            if command == "STAT":
                data = files.get(path)
                mode, size = ((S_IFREG | 0o644, len(data)) if data is not None else
                              ((S_IFDIR | 0o755, 0) if self.daemon.is_dir(path) else (0, 0)))
                self.write(stream, b"STAT" + struct.pack("<III", mode, size, self.daemon.mtime))
            elif command in ("STA2", "LST2"):
                data = files.get(path)
                if data is None and not self.daemon.is_dir(path):
                    self.write(stream, command.encode() + struct.pack("<I", 2) + b"\0" * 64)
                    continue
                mode = S_IFREG | 0o644 if data is not None else S_IFDIR | 0o755
                size = len(data) if data is not None else 0
                self.write(stream, command.encode() + struct.pack(
                    "<IQQIIIIQqqq", 0, 0, 0, mode, 1, 0, 0, size, self.daemon.mtime,
                    self.daemon.mtime, self.daemon.mtime))
            elif command in ("LIST", "LIS2"):
                prefix = path.rstrip("/") + "/"
                out = b""
                for name, data in sorted(files.items()):
                    if name.startswith(prefix) and "/" not in name[len(prefix):]:
                        leaf = name[len(prefix):].encode()
                        out += b"DENT" + struct.pack("<IIII", S_IFREG | 0o644, len(data),
                                                     self.daemon.mtime, len(leaf)) + leaf
                self.write(stream, out + b"DONE" + struct.pack("<IIII", 0, 0, 0, 0))
            elif command == "RECV":
                data = files.get(path)
                if data is None:
                    message = f"remote object '{path}' does not exist".encode()
                    self.write(stream, b"FAIL" + struct.pack("<I", len(message)) + message)
                    continue
                out = b""
                for start in range(0, len(data), SYNC_CHUNK):
                    chunk = data[start:start + SYNC_CHUNK]
                    out += b"DATA" + struct.pack("<I", len(chunk)) + chunk
                self.write(stream, out + b"DONE" + struct.pack("<I", 0))
            elif command == "SEND":
                name = path.rsplit(",", 1)[0]
                body = bytearray()
                while True:
                    kind = self.read(stream, 4)
                    size = struct.unpack("<I", self.read(stream, 4))[0]
                    if kind == b"DONE":
                        break
                    body += self.read(stream, size)
                files[name] = bytes(body)
                self.write(stream, b"OKAY" + struct.pack("<I", 0))
            else:
                message = f"unknown sync command {command!r}".encode()
                self.write(stream, b"FAIL" + struct.pack("<I", len(message)) + message)
                return


def _packet(kind: int, data: bytes) -> bytes:
    return bytes([kind]) + struct.pack("<I", len(data)) + data if data or kind == 3 else b""


class FakeAdbd:
    """A device on 127.0.0.1:`port`, reached with `adb connect`; `shell` runs its commands."""

    def __init__(self, shell: ShellRunner, files: dict[str, bytes] | None = None, *,
                 model: str = "Pixel_7", product: str = "panther", port: int = 0,
                 features: str = FEATURES) -> None:
        self.shell = shell
        self.features = features
        self.files: dict[str, bytes] = files if files is not None else {}
        self.model, self.product = model, product
        self.mtime = 1_767_254_400
        self.services: list[str] = []
        self._port = port
        self._listener: socket.socket | None = None
        self._links: list[_Link] = []
        self._stall: tuple[float, int] = (0.0, 0)
        self._drops: tuple[int, str, bool] = (0, "", True)  # (count, command prefix, after running)
        self._lock = threading.Lock()

    @property
    def port(self) -> int:
        return self._port

    @property
    def serial(self) -> str:
        """The serial the adb server gives this device after `adb connect`."""
        return f"127.0.0.1:{self._port}"

    def is_dir(self, path: str) -> bool:
        prefix = path.rstrip("/") + "/"
        return path in ("/", "/sdcard", "/data/local/tmp") or any(
            name.startswith(prefix) for name in self.files)

    def start(self) -> Self:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self._port))
        listener.listen(8)
        self._port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True,
                         name="fake-adbd-accept").start()
        return self

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                sock, _ = listener.accept()
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            link = _Link(self, sock)
            with self._lock:
                self._links.append(link)
            threading.Thread(target=link.serve, daemon=True, name="fake-adbd-link").start()

    def kill(self) -> None:
        """The device dies: the port stops listening and every connection drops."""
        if self._listener is not None:
            try:
                self._listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
            except OSError:
                pass
            self._listener.close()
            self._listener = None
        with self._lock:
            links, self._links = self._links, []
        for link in links:
            try:
                link.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            link.sock.close()

    def drop_after_running(self, count: int = 1, matching: str = "") -> None:
        """The next `count` shell commands (starting with `matching`) run, then their connection
        drops before the answer (what a flaky USB cable or Wi-Fi link does to a write)."""
        with self._lock:
            self._drops = (count, matching, True)

    def drop_before_running(self, count: int = 1, matching: str = "") -> None:
        """The next `count` shell commands (starting with `matching`) are read, then their
        connection drops before they run: to the client it looks the same as after running."""
        with self._lock:
            self._drops = (count, matching, False)

    def maybe_drop(self, command: str, *, ran: bool) -> bool:
        with self._lock:
            count, matching, after = self._drops
            if count <= 0 or after != ran or not command.startswith(matching):
                return False
            self._drops = (count - 1, matching, after)
            return True

    def stall(self, seconds: float, count: int = 1) -> None:
        """The next `count` services wait `seconds` before they answer."""
        self._stall = (seconds, count)

    def maybe_stall(self) -> None:
        with self._lock:
            seconds, count = self._stall
            if count <= 0:
                return
            self._stall = (seconds, count - 1)
        time.sleep(seconds)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.kill()
