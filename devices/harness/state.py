"""HarnessState: what the harness holds beside any device — the agent's memory, the user's
scripted answers, the answer, the goal status and the action log checkers read."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from devices.kit.log import LogEntry, copy_json

__all__ = ["HarnessState", "LogEntry"]

logger = logging.getLogger(__name__)


@dataclass
class HarnessState:
    """Memory, user answers, answer, status and log of one episode (implements PlannerState).

    `seen` holds the episodic notes the harness stored by itself (MemoryPolicy.store): memory
    reads and retrieval find them beside `memory`, but they are the episode's, not the
    user's memory the final state reports (so they never count as writes a checker sees)."""

    memory: dict[str, Any] = field(default_factory=dict)
    user_answers: dict[str, str] = field(default_factory=dict)
    answer: str | None = None
    goal_status: str | None = None
    done: bool = False
    log: list[LogEntry] = field(default_factory=list)
    step: int = 0  # the step being run, stamped on log entries
    seen: dict[str, Any] = field(default_factory=dict)

    def memory_get(self, key: str) -> Any:
        return copy_json(self.memory[key] if key in self.memory else self.seen.get(key))

    def memory_set(self, key: str, value: Any) -> None:
        self.memory[key] = copy_json(value)

    def memory_forget(self, key: str) -> Any:
        noted = self.seen.pop(key, None)
        return self.memory.pop(key, noted)

    def memory_items(self) -> list[tuple[str, Any]]:
        return [*self.memory.items(), *((k, v) for k, v in self.seen.items()
                                        if k not in self.memory)]

    def append_log(self, entry: LogEntry) -> int:
        self.log.append(entry)
        return len(self.log) - 1

    def replace_log(self, index: int, entry: LogEntry) -> None:
        self.log[index] = entry

    def copy(self) -> HarnessState:
        return HarnessState(copy_json(self.memory), dict(self.user_answers), self.answer,
                            self.goal_status, self.done, list(self.log), self.step,
                            copy_json(self.seen))
