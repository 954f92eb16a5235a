"""Reviewer tokens: issued once, stored only as sha256 hashes (a file of mode 0600)."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import tempfile
import threading
from pathlib import Path

__all__ = ["TOKEN_PREFIX", "ReviewerTokens", "TokenError", "hash_token"]

logger = logging.getLogger(__name__)

#: Marks a string as a flywheel reviewer token (and makes a leaked one easy to grep for).
TOKEN_PREFIX = "fwr_"
#: 32 random bytes: a token is unguessable, so one sha256 (not a slow password hash) suffices.
TOKEN_BYTES = 32
_NAME = re.compile(r"^[A-Za-z0-9._@-]{1,64}$")


class TokenError(ValueError):
    """A reviewer name or the token file is bad; the message says what to do."""


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class ReviewerTokens:
    """name → sha256(token), persisted as JSON at `path` (written atomically, mode 0600).

    A running gate sees tokens issued or revoked by `flywheel gate token` in another process:
    the file is read again when it was replaced (one stat per check).
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._hashes: dict[str, str] = {}
        # (inode, mtime, size): every save replaces the file, so a new inode marks a change even
        # within one tick of a coarse file-system clock.
        self._stamp: tuple[int, int, int] | None = None
        self._load(strict=True)

    def _load(self, *, strict: bool) -> None:
        try:
            info = self.path.stat()
        except FileNotFoundError:
            self._hashes, self._stamp = {}, None
            return
        stamp = (info.st_ino, info.st_mtime_ns, info.st_size)
        if stamp == self._stamp:
            return
        try:
            data = json.loads(self.path.read_text())
            hashes = {str(k): str(v["sha256"]) for k, v in data["reviewers"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            if strict:
                raise TokenError(f"the reviewer token file {self.path} is unreadable ({error}); "
                                 "move it away and issue tokens again") from None
            logger.warning("keeping the reviewer tokens loaded before: %s is unreadable (%s)",
                           self.path, error)
            return
        self._hashes, self._stamp = hashes, stamp

    def hash_of(self, name: str) -> str | None:
        """The stored hash of `name`'s current token (None when they have none)."""
        self._load(strict=False)
        return self._hashes.get(name)

    @property
    def reviewers(self) -> list[str]:
        return sorted(self._hashes)

    def issue(self, name: str) -> str:
        """A new token for `name` (replacing any earlier one); only its hash is kept."""
        if not _NAME.match(name):
            raise TokenError(f"reviewer name {name!r} must be 1-64 letters, digits or ._@-")
        token = TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)
        with self._lock:
            self._load(strict=False)
            self._hashes[name] = hash_token(token)
            self._save()
        return token

    def kept(self, name: str, keep: Path, *, rotate: bool = False) -> tuple[str, bool]:
        """(token, reused) for the local reviewer `name`: the token kept in `keep` (mode 0600)
        while it still matches the stored hash, else (or with `rotate`) a new one, written there.
        So each `flywheel run` on a data dir does not hand out a new token."""
        if not rotate and keep.is_file():
            token = keep.read_text(encoding="utf-8").strip()
            if self.reviewer_for(token) == name:
                return token, True
        token = self.issue(name)
        keep.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(keep, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), 0o600)
            handle.write(token + "\n")
        return token, False

    def revoke(self, name: str) -> bool:
        with self._lock:
            self._load(strict=False)
            found = self._hashes.pop(name, None) is not None
            if found:
                self._save()
            return found

    def reviewer_for(self, token: str) -> str | None:
        """The reviewer whose token this is, or None (compared in constant time)."""
        if not token.startswith(TOKEN_PREFIX):
            return None
        self._load(strict=False)
        digest = hash_token(token)
        found = None
        for name, stored in self._hashes.items():
            if hmac.compare_digest(stored, digest):
                found = name
        return found

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        reviewers = {n: {"sha256": h} for n, h in sorted(self._hashes.items())}
        body = json.dumps({"reviewers": reviewers}, indent=2)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".reviewers-")
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(body)
            os.replace(tmp, self.path)
            info = self.path.stat()
            self._stamp = (info.st_ino, info.st_mtime_ns, info.st_size)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
