"""A tiny deterministic PNG encoder, so the fake device's screencap returns a real image."""

from __future__ import annotations

import hashlib
import struct
import zlib

__all__ = ["encode_png", "screen_png"]

#: Small on purpose: tests only need a valid PNG whose bytes follow the screen content.
WIDTH, HEIGHT = 27, 60


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def encode_png(width: int, height: int, rgb: bytes) -> bytes:
    """An 8-bit RGB PNG from `width*height*3` bytes of pixels."""
    rows = b"".join(b"\x00" + rgb[y * width * 3:(y + 1) * width * 3] for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(rows, 6)) + _chunk(b"IEND", b""))


def screen_png(seed: bytes) -> bytes:
    """A PNG whose pixels are derived from `seed` (e.g. the UI dump), so screens differ."""
    stream = b""
    counter = 0
    while len(stream) < WIDTH * HEIGHT * 3:
        stream += hashlib.sha256(seed + counter.to_bytes(4, "little")).digest()
        counter += 1
    return encode_png(WIDTH, HEIGHT, stream[:WIDTH * HEIGHT * 3])
