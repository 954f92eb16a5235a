"""HarnessSpec: the versioned, serialisable, content-addressed configuration of a harness.

Everything the harness adds around a policy is in the spec: which tools are shown and how they
are described, the skill library, the sub-agents, the memory policy, the playbook notes and the
context budget. `spec.version` is the first 12 hex digits of the sha256 of the spec's
canonical JSON (sorted keys, no whitespace, `parent` left out), so two specs with the same
content have the same version wherever they were built, and every episode names the version
it ran under.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import logging
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from devices.harness.skills import SKILLS, Skill
from devices.harness.subagents import SUBAGENTS, SubAgent
from schemas.envelope import Frozen

__all__ = [
    "SEEN_PREFIX",
    "ContextPolicy",
    "DelegationPolicy",
    "HarnessSpec",
    "MemoryPolicy",
    "SpecError",
    "ToolPolicy",
    "content_version",
]

logger = logging.getLogger(__name__)

# 12 hex digits (48 bits) name a spec without collisions among the few thousand versions an
# evolver proposes, and stay short enough to read in a report.
VERSION_DIGITS = 12

# A store pattern names tools: letters, digits, '.', '_', '-' and the wildcards '*' and '?'.
_STORE_PATTERN = re.compile(r"^[A-Za-z0-9_.*?-]+$")
#: Key prefix of the episodic notes the harness stores by itself (`MemoryPolicy.store`).
SEEN_PREFIX = "note/seen/"

# The default playbook: short, general notes every episode's context carries.
DEFAULT_PLAYBOOK: tuple[str, ...] = (
    "Look values up with read tools before writing; ids differ in every world.",
    "Facts from earlier sessions are only in memory: read memory before asking the user.",
    "Change only what the goal asks; every extra write fails the task.",
    "Answer with exactly the value asked for, then finish.",
)


class SpecError(ValueError):
    """A harness spec file is missing, unreadable or invalid."""


class ToolPolicy(Frozen):
    """Which tools the catalogue shows and how they are described."""

    hidden: tuple[str, ...] = Field(default=(), description="Tool names never shown.")
    descriptions: dict[str, str] = Field(
        default_factory=dict, description="Tool name → description that replaces the device's.")


class MemoryPolicy(Frozen):
    """What the harness stores in memory by itself, how memory is retrieved and what the
    context shows of it.

    `store` is left out of the spec's JSON while it is empty, so every spec written before
    the field existed keeps its content hash (its version)."""

    retrieval: Literal["lexical"] = Field(
        default="lexical", description="Ranking of memory entries for a query (token overlap).")
    top_k: int = Field(default=5, ge=1, le=100, description="Hits a memory query returns.")
    context_entries: int = Field(
        default=0, ge=0, le=50,
        description="Memory entries the context shows up front, most relevant to the goal first "
                    "(0: the policy must read memory itself).")
    store: tuple[str, ...] = Field(
        default=(), description="Tools (names or fnmatch patterns such as 'contacts.*') whose "
        "successful results the harness writes to the episode's memory by itself, as the note "
        "'note/seen/<tool>' (the latest result of that tool): a fact seen early stays "
        "retrievable with memory_read after it has left the recent steps. These notes belong "
        "to the episode, not to the user's memory a checker reads. Empty: nothing is stored "
        "unless the policy writes it.")

    @field_validator("store")
    @classmethod
    def _patterns(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [p for p in value if not _STORE_PATTERN.match(p)]
        if bad:
            raise ValueError(f"memory store patterns {bad} are not tool names or patterns "
                             "(letters, digits, . _ - * ? only)")
        return tuple(sorted(set(value)))

    @model_serializer(mode="wrap")
    def _without_empty_store(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        if not self.store:
            data.pop("store", None)
        return data

    def stores(self, tool: str) -> bool:
        """Whether the harness stores the results of `tool` by itself."""
        return any(fnmatch.fnmatchcase(tool, pattern) for pattern in self.store)


class ContextPolicy(Frozen):
    """The language-model context: a token budget and how much history it keeps."""

    budget_tokens: int = Field(default=2048, ge=64, le=131_072,
                               description="Upper bound on the rendered context, in tokens.")
    recent_steps: int = Field(default=4, ge=0, le=64,
                              description="Most recent (action, observation) pairs shown.")
    screen_elements: int = Field(default=30, ge=0, le=500,
                                 description="UI elements of the latest screen shown.")


class DelegationPolicy(Frozen):
    """How a sub-agent runs when it is handed a task rather than a plan of tool calls."""

    max_steps: int = Field(default=8, ge=1, le=64,
                           description="Actions a policy-run sub-agent may take before it must "
                                       "answer.")


class HarnessSpec(Frozen):
    """The harness configuration; `version` is content-addressed."""

    tools: ToolPolicy = Field(default_factory=ToolPolicy)
    skills: tuple[Skill, ...] = ()
    subagents: tuple[SubAgent, ...] = ()
    memory: MemoryPolicy = Field(default_factory=MemoryPolicy)
    playbook: tuple[str, ...] = ()
    context: ContextPolicy = Field(default_factory=ContextPolicy)
    delegation: DelegationPolicy = Field(default_factory=DelegationPolicy)
    parent: str | None = Field(default=None,
                               description="Version this spec was derived from (not hashed).")

    @model_validator(mode="after")
    def _unique_names(self) -> HarnessSpec:
        for kind, names in (("skill", [s.name for s in self.skills]),
                            ("sub-agent", [a.name for a in self.subagents])):
            repeated = sorted({n for n in names if names.count(n) > 1})
            if repeated:
                raise ValueError(f"harness spec repeats {kind} names {repeated}")
        return self

    # ---- identity ------------------------------------------------------------------------
    def canonical_json(self) -> str:
        """Sorted-key, whitespace-free JSON of the content (without `parent`)."""
        return json.dumps(self.model_dump(mode="json", exclude={"parent"}), sort_keys=True,
                          separators=(",", ":"), ensure_ascii=False)

    def canonical(self) -> HarnessSpec:
        """The same spec with every mapping in sorted-key order (what a JSON round trip through
        the registry gives): equal content, equal behaviour wherever the spec was built."""
        data = json.loads(self.canonical_json())
        return type(self).model_validate({**data, "parent": self.parent})

    @property
    def version(self) -> str:
        return _digest(self.canonical_json())

    # ---- lookups -------------------------------------------------------------------------
    def skill(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)

    def subagent(self, name: str) -> SubAgent | None:
        return next((a for a in self.subagents if a.name == name), None)

    # ---- construction and files ------------------------------------------------------------
    @classmethod
    def default(cls) -> HarnessSpec:
        """The built-in harness: every skill and sub-agent of the library, the default playbook."""
        return cls(skills=tuple(SKILLS.values()), subagents=tuple(SUBAGENTS.values()),
                   playbook=DEFAULT_PLAYBOOK)

    def to_json_dict(self) -> dict[str, Any]:
        """The spec as JSON, with its version alongside (checked again on load)."""
        return {"version": self.version, **self.model_dump(mode="json")}

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> HarnessSpec:
        body = dict(data)
        claimed = body.pop("version", None)
        try:
            spec = cls.model_validate(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(top level)"
            raise SpecError(f"harness spec is invalid at {where}: {first['msg']}") from None
        if claimed is not None and claimed != spec.version:
            raise SpecError(f"harness spec says version {claimed} but its content hashes to "
                            f"{spec.version}; it was edited by hand: drop the version field")
        return spec

    def save(self, path: str | Path) -> Path:
        """Writes the spec as indented JSON; returns the path."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(self.to_json_dict(), indent=2, sort_keys=True,
                                     ensure_ascii=False) + "\n", encoding="utf-8")
        return target

    @classmethod
    def load(cls, path: str | Path) -> HarnessSpec:
        source = Path(path)
        try:
            data = json.loads(source.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise SpecError(f"harness spec {source} does not exist; save one with "
                            "HarnessSpec.default().save(PATH)") from None
        except (OSError, json.JSONDecodeError) as exc:
            raise SpecError(f"harness spec {source} is not readable JSON ({exc})") from None
        if not isinstance(data, dict):
            raise SpecError(f"harness spec {source} must hold a JSON object")
        return cls.from_json_dict(data)


def content_version(spec: Any) -> str:
    """The content address of a spec's JSON (a mapping): the first VERSION_DIGITS hex digits of
    the sha256 over its sorted-key, whitespace-free JSON without `version` and `parent`. The one
    harness hash: `HarnessSpec.version` and the registry's files both use it."""
    content = {k: v for k, v in dict(spec).items() if k not in ("version", "parent")}
    return _digest(json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


def _digest(canonical: str) -> str:
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:VERSION_DIGITS]
