"""The action log: one `LogEntry` per thing the agent (or a sub-agent) did, and `copy_json`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["LogEntry", "LogKind", "copy_json"]

LogKind = Literal[
    "tool_call", "skill", "delegate", "memory_read", "memory_write", "ask_user", "answer", "gui",
]


def copy_json(value: Any) -> Any:
    """A structural copy of a JSON value (dicts and lists copied, scalars shared)."""
    if type(value) is dict:
        return {k: copy_json(v) for k, v in value.items()}
    if type(value) is list:
        return [copy_json(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One thing the agent (or a sub-agent) did; checkers read these, never the agent's claim."""

    step: int
    kind: LogKind
    name: str
    arguments: dict[str, Any]
    ok: bool
    agent: str = "main"
    parent: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "kind": self.kind, "name": self.name,
                "arguments": copy_json(self.arguments), "ok": self.ok, "agent": self.agent,
                "parent": self.parent}
