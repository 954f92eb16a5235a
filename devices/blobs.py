"""A content-addressed blob store on local disk for screenshots, UI dumps and other large payloads."""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path

from schemas.observations import BlobRef

__all__ = ["BlobNotFound", "BlobStore"]

logger = logging.getLogger(__name__)

# Two hex characters of fan-out keep any one directory under ~1/256 of the blobs.
FANOUT_CHARS = 2


class BlobNotFound(KeyError):
    """No blob with that sha256 is in the store."""


class BlobStore:
    """Stores bytes under their sha256 in `root/ab/abcdef...`; writes are atomic and idempotent."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def path_for(self, sha256: str) -> Path:
        """Where the blob with this digest lives (whether or not it exists yet)."""
        return self.root / sha256[:FANOUT_CHARS] / sha256

    def put(self, data: bytes, media_type: str = "application/octet-stream") -> BlobRef:
        """Stores `data` (a no-op when the same bytes are already stored) and returns its ref."""
        digest = hashlib.sha256(data).hexdigest()
        target = self.path_for(digest)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                os.replace(tmp, target)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        return BlobRef(sha256=digest, size=len(data), media_type=media_type)

    def get(self, sha256: str) -> bytes:
        """The stored bytes for `sha256`; raises BlobNotFound when absent."""
        target = self.path_for(sha256)
        try:
            return target.read_bytes()
        except FileNotFoundError:
            raise BlobNotFound(f"blob {sha256} is not in the store at {self.root}") from None

    def __contains__(self, sha256: object) -> bool:
        return isinstance(sha256, str) and self.path_for(sha256).exists()
