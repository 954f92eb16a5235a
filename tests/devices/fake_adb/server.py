"""The host side of the adb wire protocol on 127.0.0.1: host services, transports, shell v1/v2, sync.

Requests are 4-hex-digit length prefixed; replies are OKAY or FAIL + a length-prefixed
message. After a transport is selected (host:transport:, host:tport:serial: with its 8-byte
transport id, host:transport-id:) the same connection carries one device service:
shell:, shell,v2:, exec:, or sync: (STAT/STA2/LST2/LIST/RECV/SEND/QUIT).
"""

from __future__ import annotations

import logging
import socket
import socketserver
import struct
import threading
import time
from dataclasses import dataclass
from typing import Self

from tests.devices.fake_adb.shell import FakeDevice

__all__ = ["ADB_SERVER_VERSION", "FakeAdbServer"]

logger = logging.getLogger(__name__)

#: 41 is adb 1.0.41: adbutils then selects transports with host:tport:serial (8-byte id reply).
ADB_SERVER_VERSION = 41

#: What our fake devices claim to support (adbutils asks before using shell v2).
FEATURES = "shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir,apex,abb,abb_exec"

#: Sync DATA chunks are at most 64 KiB in the real protocol.
SYNC_CHUNK = 64 * 1024

S_IFREG = 0o100000
S_IFDIR = 0o040000


class _Closed(Exception):
    """The client hung up."""


def _block(text: str | bytes) -> bytes:
    data = text.encode() if isinstance(text, str) else text
    return f"{len(data):04x}".encode() + data


@dataclass
class _Stall:
    seconds: float
    remaining: int


class FakeAdbServer:
    """A threaded fake adb server; `devices` maps serial → FakeDevice (a SimPhone behind a shell)."""

    def __init__(self, devices: dict[str, FakeDevice] | None = None, *,
                 version: int = ADB_SERVER_VERSION) -> None:
        self.devices: dict[str, FakeDevice] = dict(devices or {})
        self.version = version
        self.gone: set[str] = set()
        self.offline: set[str] = set()
        self.requests: list[str] = []
        self._stalls: dict[str, _Stall] = {}
        self._lock = threading.Lock()
        self._server: socketserver.ThreadingTCPServer | None = None
        self._thread: threading.Thread | None = None
        self._transport_ids = {serial: i + 1 for i, serial in enumerate(self.devices)}

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._server is not None, "start the fake adb server first"
        return self._server.server_address[1]

    def start(self) -> Self:
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                outer._serve(self.request)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-adb",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- test controls ----------------------------------------------------------------------

    def disappear(self, serial: str) -> None:
        """The device is unplugged: gone from host:devices, transports to it fail."""
        self.gone.add(serial)

    def reappear(self, serial: str) -> None:
        self.gone.discard(serial)

    def stall(self, serial: str, seconds: float, count: int = 1) -> None:
        """The next `count` device services on `serial` wait `seconds` before answering."""
        self._stalls[serial] = _Stall(seconds, count)

    def shell_commands(self, serial: str) -> list[str]:
        """Every shell command line the device received, in order."""
        return list(self.devices[serial].history)

    # -- protocol ---------------------------------------------------------------------------

    def _serve(self, sock: socket.socket) -> None:
        try:
            self._session(sock)
        except (_Closed, ConnectionError, OSError):
            pass
        finally:
            try:
                sock.close()
            except OSError:
                pass

    @staticmethod
    def _read_exact(sock: socket.socket, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            if not chunk:
                raise _Closed
            buf += chunk
        return buf

    def _request(self, sock: socket.socket) -> str:
        size = int(self._read_exact(sock, 4), 16)
        request = self._read_exact(sock, size).decode("utf-8")
        with self._lock:
            self.requests.append(request)
        return request

    def _present(self, serial: str) -> bool:
        return serial in self.devices and serial not in self.gone

    def _device_list(self, long: bool) -> str:
        lines = []
        for serial in self.devices:
            if serial in self.gone:
                continue
            state = "offline" if serial in self.offline else "device"
            if long:
                lines.append(f"{serial}\t{state} product:flywheel model:SimPhone device:sim "
                             f"transport_id:{self._transport_ids[serial]}")
            else:
                lines.append(f"{serial}\t{state}")
        return "".join(line + "\n" for line in lines)

    def _fail(self, sock: socket.socket, message: str) -> None:
        sock.sendall(b"FAIL" + _block(message))

    def _select(self, sock: socket.socket, serial: str) -> bool:
        if not self._present(serial):
            self._fail(sock, f"device '{serial}' not found")
            return False
        if serial in self.offline:
            self._fail(sock, "device offline")
            return False
        return True

    def _session(self, sock: socket.socket) -> None:
        transport: str | None = None
        while True:
            request = self._request(sock)
            if transport is not None:
                self._device_service(sock, transport, request)
                return
            if request == "host:version":
                sock.sendall(b"OKAY" + _block(f"{self.version:04x}"))
            elif request in ("host:devices", "host:devices-l"):
                sock.sendall(b"OKAY" + _block(self._device_list(request.endswith("-l"))))
            elif request == "host:kill":
                sock.sendall(b"OKAY")
                return
            elif request.startswith("host:tport:serial:"):
                serial = request[len("host:tport:serial:"):]
                if not self._select(sock, serial):
                    return
                sock.sendall(b"OKAY" + struct.pack("<Q", self._transport_ids[serial]))
                transport = serial
            elif request.startswith("host:transport:"):
                serial = request[len("host:transport:"):]
                if not self._select(sock, serial):
                    return
                sock.sendall(b"OKAY")
                transport = serial
            elif request.startswith("host:transport-id:"):
                wanted = int(request[len("host:transport-id:"):])
                serial = next((s for s, t in self._transport_ids.items() if t == wanted), "")
                if not self._select(sock, serial):
                    return
                sock.sendall(b"OKAY")
                transport = serial
            elif request.startswith("host-serial:"):
                serial, _, command = request[len("host-serial:"):].rpartition(":")
                self._host_serial(sock, serial, command)
                return
            else:
                self._fail(sock, f"unknown host service '{request}'")
                return

    def _host_serial(self, sock: socket.socket, serial: str, command: str) -> None:
        if command == "get-state":
            if not self._present(serial):
                self._fail(sock, f"device '{serial}' not found")
                return
            state = "offline" if serial in self.offline else "device"
            sock.sendall(b"OKAY" + _block(state))
            return
        if not self._select(sock, serial):
            return
        if command == "features":
            sock.sendall(b"OKAY" + _block(FEATURES))
        elif command == "get-serialno":
            sock.sendall(b"OKAY" + _block(serial))
        else:
            self._fail(sock, f"unsupported host-serial service '{command}'")

    def _maybe_stall(self, serial: str) -> None:
        with self._lock:
            stall = self._stalls.get(serial)
            if stall is None or stall.remaining <= 0:
                return
            stall.remaining -= 1
        time.sleep(stall.seconds)

    def _device_service(self, sock: socket.socket, serial: str, request: str) -> None:
        device = self.devices[serial]
        if request.startswith(("shell,v2,raw:", "shell,v2:", "shell,raw,v2:")):
            command = request.split(":", 1)[1]
            sock.sendall(b"OKAY")
            self._maybe_stall(serial)
            out, err, code = device.run(command)
            packets = b""
            if out:
                packets += b"\x01" + struct.pack("<I", len(out)) + out
            if err:
                packets += b"\x02" + struct.pack("<I", len(err)) + err
            packets += b"\x03" + struct.pack("<I", 1) + bytes([code & 0xFF])
            sock.sendall(packets)
        elif request.startswith(("shell:", "exec:")):
            command = request.split(":", 1)[1]
            sock.sendall(b"OKAY")
            self._maybe_stall(serial)
            marker = "; echo X4EXIT:$?"
            if command.endswith(marker):
                out, err, code = device.run(command[:-len(marker)])
                sock.sendall(out + err + f"X4EXIT:{code}".encode())
            else:
                out, err, _ = device.run(command)
                sock.sendall(out + err)
        elif request == "sync:":
            sock.sendall(b"OKAY")
            self._maybe_stall(serial)
            self._sync(sock, device)
        else:
            self._fail(sock, f"unsupported device service '{request.split(':', 1)[0]}'")

    # -- sync -------------------------------------------------------------------------------

    def _sync(self, sock: socket.socket, device: FakeDevice) -> None:
        while True:
            header = self._read_exact(sock, 8)
            command = header[:4].decode("ascii", errors="replace")
            length = struct.unpack("<I", header[4:])[0]
            if command == "QUIT":
                return
            if command == "DONE":
                continue
            path = self._read_exact(sock, length).decode("utf-8")
            if command == "STAT":
                data = device.files.get(path)
                if data is None:
                    mode = S_IFDIR | 0o755 if device.is_dir(path) else 0
                    sock.sendall(b"STAT" + struct.pack("<III", mode, 0, 0))
                else:
                    sock.sendall(b"STAT" + struct.pack("<III", S_IFREG | 0o644, len(data),
                                                       device.mtime))
            elif command in ("STA2", "LST2"):
                data = device.files.get(path)
                error = 0 if data is not None or device.is_dir(path) else 2  # ENOENT
                mode = (S_IFREG | 0o644) if data is not None else (S_IFDIR | 0o755 if not error
                                                                    else 0)
                size = len(data) if data is not None else 0
                sock.sendall(command.encode() + struct.pack(
                    "<IQQIIIIQqqq", error, 1, 1, mode, 1, 0, 0, size, device.mtime,
                    device.mtime, device.mtime))
            elif command == "LIST":
                prefix = path.rstrip("/") + "/"
                for name, data in sorted(device.files.items()):
                    if name.startswith(prefix) and "/" not in name[len(prefix):]:
                        leaf = name[len(prefix):].encode()
                        sock.sendall(b"DENT" + struct.pack("<IIII", S_IFREG | 0o644, len(data),
                                                           device.mtime, len(leaf)) + leaf)
                sock.sendall(b"DONE" + struct.pack("<IIII", 0, 0, 0, 0))
            elif command == "RECV":
                data = device.files.get(path)
                if data is None:
                    message = f"remote object '{path}' does not exist".encode()
                    sock.sendall(b"FAIL" + struct.pack("<I", len(message)) + message)
                    return
                for offset in range(0, len(data), SYNC_CHUNK):
                    chunk = data[offset:offset + SYNC_CHUNK]
                    sock.sendall(b"DATA" + struct.pack("<I", len(chunk)) + chunk)
                sock.sendall(b"DONE" + struct.pack("<I", 0))
            elif command == "SEND":
                target = path.rsplit(",", 1)[0]
                body = b""
                while True:
                    head = self._read_exact(sock, 8)
                    size = struct.unpack("<I", head[4:])[0]
                    if head[:4] == b"DONE":
                        break
                    body += self._read_exact(sock, size)
                device.files[target] = body
                sock.sendall(b"OKAY" + struct.pack("<I", 0))
            else:
                message = f"unknown sync command {command!r}".encode()
                sock.sendall(b"FAIL" + struct.pack("<I", len(message)) + message)
                return
