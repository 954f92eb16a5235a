"""The harness registry: every harness version ever made, which one is current, and its history.

Layout under `<FLYWHEEL_DATA_DIR>/harness/`:
  versions/<version>.json   the spec JSON (content-addressed: the file name is its version)
  history.jsonl             one line per change of the current version (promotion or rollback)
  CURRENT                   the version rollouts use now

Specs are immutable once written, so rolling back is pointing CURRENT at an old file: the
rolled-back harness is byte-for-byte the one that produced the earlier scores.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from devices.harness.spec import content_version as spec_version

__all__ = ["HarnessRegistry", "HistoryEntry", "RegistryError", "VersionInfo"]

logger = logging.getLogger(__name__)

#: Shortest version prefix accepted on the command line (git's default abbreviation).
MIN_PREFIX = 4


class RegistryError(ValueError):
    """A version is unknown, ambiguous or unreadable; the message says what to do."""


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One change of the current version."""

    at: str
    version: str
    previous: str | None
    reason: Literal["init", "gate", "rollback"]
    proposal_id: str | None = None

    def to_json(self) -> str:
        return json.dumps({"at": self.at, "version": self.version, "previous": self.previous,
                           "reason": self.reason, "proposal_id": self.proposal_id},
                          sort_keys=True)


@dataclass(frozen=True, slots=True)
class VersionInfo:
    """A stored version: its parent and when it first became current (None: never)."""

    version: str
    parent: str | None
    current: bool
    promoted_at: str | None
    reason: str | None


class HarnessRegistry:
    """Harness versions stored as JSON files under `root` (see the module docstring)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.versions_dir = self.root / "versions"
        self.history_path = self.root / "history.jsonl"
        self.current_path = self.root / "CURRENT"

    @classmethod
    def at_data_dir(cls, data_dir: str | Path) -> HarnessRegistry:
        return cls(Path(data_dir) / "harness")

    # ---- versions ------------------------------------------------------------------------
    def put(self, spec: Mapping[str, Any]) -> str:
        """Stores `spec` (idempotent) and returns its version; a claimed version that does not
        match the content is refused."""
        version = spec_version(spec)
        claimed = spec.get("version")
        if claimed is not None and claimed != version:
            raise RegistryError(f"spec claims version {claimed} but its content hashes to "
                                f"{version}; it was edited by hand: drop the version field")
        path = self.versions_dir / f"{version}.json"
        if not path.exists():
            self.versions_dir.mkdir(parents=True, exist_ok=True)
            body = json.dumps({**spec, "version": version}, indent=2, sort_keys=True,
                              ensure_ascii=False) + "\n"
            _atomic_write(path, body)
        return version

    def resolve(self, prefix: str) -> str:
        """The full version a prefix (≥ 4 hex digits) names, or 'current'."""
        if prefix == "current":
            current = self.current()
            if current is None:
                raise RegistryError("no harness is current yet; run the loop or promote one")
            return current
        if len(prefix) < MIN_PREFIX:
            raise RegistryError(f"version {prefix!r} is too short; give at least {MIN_PREFIX} "
                                "characters (see 'flywheel harness list')")
        if not all(c in "0123456789abcdef" for c in prefix.lower()):  # versions are hex digests
            raise RegistryError(f"version {prefix[:40]!r} is not a harness version (a hex digest prefix); "
                                "see 'flywheel harness list'")
        matches = sorted(p.stem for p in self.versions_dir.glob(f"{prefix.lower()}*.json"))
        if not matches:
            raise RegistryError(f"no harness version {prefix!r} in {self.versions_dir}; see "
                                "'flywheel harness list'")
        if len(matches) > 1:
            raise RegistryError(f"version {prefix!r} is ambiguous ({', '.join(matches[:4])}); "
                                "give more characters")
        return matches[0]

    def get(self, version: str) -> dict[str, Any]:
        """The stored spec JSON of `version` (a prefix or 'current' works too)."""
        full = self.resolve(version)
        path = self.versions_dir / f"{full}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise RegistryError(f"harness version file {path} is unreadable ({exc})") from None
        if spec_version(data) != full:
            raise RegistryError(f"harness version file {path} was edited: its content hashes to "
                                f"{spec_version(data)}; restore it or delete it")
        return data

    # ---- current and history ---------------------------------------------------------------
    def current(self) -> str | None:
        try:
            return self.current_path.read_text(encoding="utf-8").strip() or None
        except FileNotFoundError:
            return None

    def current_spec(self) -> Any:
        """The current harness as a devices.harness HarnessSpec (the built-in one when none is
        current yet): what a rollout wraps its device in, `Harness(device, spec)`, so its
        episodes name the promoted version."""
        from devices.harness.spec import HarnessSpec

        current = self.current()
        if current is None:
            return HarnessSpec.default()
        return HarnessSpec.from_json_dict(self.get(current))

    def history(self) -> list[HistoryEntry]:
        if not self.history_path.exists():
            return []
        out = []
        for line in self.history_path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(HistoryEntry(**json.loads(line)))
        return out

    def _set_current(self, version: str, reason: Literal["init", "gate", "rollback"],
                     proposal_id: str | None) -> HistoryEntry:
        previous = self.current()
        entry = HistoryEntry(at=datetime.now(UTC).isoformat(), version=version,
                             previous=previous, reason=reason, proposal_id=proposal_id)
        self.root.mkdir(parents=True, exist_ok=True)
        with self.history_path.open("a", encoding="utf-8") as handle:
            handle.write(entry.to_json() + "\n")
        _atomic_write(self.current_path, version + "\n")
        return entry

    def init(self, spec: Mapping[str, Any]) -> str:
        """Makes `spec` current when no harness is; returns the current version either way."""
        current = self.current()
        if current is not None:
            return current
        version = self.put(spec)
        self._set_current(version, "init", None)
        return version

    def promote(self, spec: Mapping[str, Any], proposal_id: str | None = None) -> HistoryEntry:
        """Stores `spec` and makes it current (a promotion through the gate)."""
        version = self.put(spec)
        if version == self.current():
            raise RegistryError(f"harness {version} is already current")
        return self._set_current(version, "gate", proposal_id)

    def rollback(self, version: str) -> HistoryEntry:
        """Makes an earlier stored version current again."""
        full = self.resolve(version)
        self.get(full)  # refuses an edited file before anything moves
        if full == self.current():
            raise RegistryError(f"harness {full} is already current; nothing to roll back")
        return self._set_current(full, "rollback", None)

    def versions(self) -> list[VersionInfo]:
        """Every stored version, oldest promotion first, never-current ones last."""
        first: dict[str, HistoryEntry] = {}
        for entry in self.history():
            first.setdefault(entry.version, entry)
        current = self.current()
        infos = []
        for path in sorted(self.versions_dir.glob("*.json")):
            try:
                parent = json.loads(path.read_text(encoding="utf-8")).get("parent")
            except (OSError, json.JSONDecodeError):
                parent = None
            seen = first.get(path.stem)
            infos.append(VersionInfo(version=path.stem, parent=parent,
                                     current=path.stem == current,
                                     promoted_at=seen.at if seen else None,
                                     reason=seen.reason if seen else None))
        return sorted(infos, key=lambda i: (i.promoted_at is None, i.promoted_at or "",
                                            i.version))


def _atomic_write(path: Path, text: str) -> None:
    """Write then rename, so a crash never leaves half a file where a reader looks."""
    tmp = path.with_suffix(path.suffix + f".tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
