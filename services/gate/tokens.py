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
    """name → sha256(token), persisted as JSON at `path` (written atomically, mode 0600)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._hashes: dict[str, str] = {}
        if self.path.exists():
            try:
                data = json.loads(self.path.read_text())
                self._hashes = {str(k): str(v["sha256"]) for k, v in data["reviewers"].items()}
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
                raise TokenError(f"the reviewer token file {self.path} is unreadable ({error}); "
                                 "move it away and issue tokens again") from None

    @property
    def reviewers(self) -> list[str]:
        return sorted(self._hashes)

    def issue(self, name: str) -> str:
        """A new token for `name` (replacing any earlier one); only its hash is kept."""
        if not _NAME.match(name):
            raise TokenError(f"reviewer name {name!r} must be 1-64 letters, digits or ._@-")
        token = TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)
        with self._lock:
            self._hashes[name] = hash_token(token)
            self._save()
        return token

    def revoke(self, name: str) -> bool:
        with self._lock:
            found = self._hashes.pop(name, None) is not None
            if found:
                self._save()
            return found

    def reviewer_for(self, token: str) -> str | None:
        """The reviewer whose token this is, or None (compared in constant time)."""
        if not token.startswith(TOKEN_PREFIX):
            return None
        digest = hash_token(token)
        found = None
        for name, stored in self._hashes.items():
            if hmac.compare_digest(stored, digest):
                found = name
        return found

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = json.dumps({"reviewers": {n: {"sha256": h} for n, h in sorted(self._hashes.items())}},
                          indent=2)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".reviewers-")
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(body)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
