"""Harness-side state for a real device: the agent's memory, the user's scripted answers, the
answer and the action log, which a phone does not hold. Planner actions run on it through
devices.sim.planner, exactly as on SimPhone, so one checker reads both backends."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from devices.sim.planner import CallTool
from devices.sim.state import LogEntry, copy_json
from schemas.observations import ToolResult

__all__ = ["HarnessState", "ToolRunner", "logged_tool_runner"]

logger = logging.getLogger(__name__)

#: Runs one tool call on the device: (name, arguments) → ToolResult.
ToolRunner = Callable[[str, dict[str, Any]], ToolResult]


@dataclass
class HarnessState:
    """What a real device does not hold; implements devices.sim.planner.PlannerState."""

    memory: dict[str, Any] = field(default_factory=dict)
    user_answers: dict[str, str] = field(default_factory=dict)
    answer: str | None = None
    goal_status: str | None = None
    done: bool = False
    log: list[LogEntry] = field(default_factory=list)
    step: int = 0  # the step being run, stamped on log entries (AdbPhone sets it)

    def memory_get(self, key: str) -> Any:
        return self.memory.get(key)

    def memory_set(self, key: str, value: Any) -> None:
        self.memory[key] = copy_json(value)

    def memory_items(self) -> list[tuple[str, Any]]:
        return list(self.memory.items())

    def append_log(self, entry: LogEntry) -> int:
        self.log.append(entry)
        return len(self.log) - 1

    def replace_log(self, index: int, entry: LogEntry) -> None:
        self.log[index] = entry

    def copy(self) -> HarnessState:
        return HarnessState(copy_json(self.memory), dict(self.user_answers), self.answer,
                            self.goal_status, self.done, list(self.log), self.step)


def logged_tool_runner(state: HarnessState, run_tool: ToolRunner) -> CallTool:
    """A CallTool that runs each tool over adb and logs it in `state`, as SimPhone.call_tool does."""

    def call(name: str, arguments: dict[str, Any], *, agent: str = "main",
             parent: str | None = None) -> ToolResult:
        result = run_tool(name, arguments)
        state.append_log(LogEntry(state.step, "tool_call", name, copy_json(arguments), result.ok,
                                  agent, parent))  # type: ignore[arg-type]
        return result

    return call
