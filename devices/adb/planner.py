"""Harness-side planner actions for a real device: memory, ask_user, answer/finish, skills and
delegation expanded into tool calls. The agent's memory and the user's answers live here, not
on the phone; every action is logged with the sim phone's LogEntry so checkers read one shape."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from devices.sim.skills import SKILLS, prepare_arguments, render_arguments
from devices.sim.state import LogEntry, copy_json
from devices.sim.subagents import PLAN_SCHEMA, SUBAGENTS
from devices.sim.tools import BadArguments, compile_validator
from schemas.actions import (
    Answer, AskUser, Delegate, Finish, MemoryRead, MemoryWrite, Status, ToolCall, UseSkill,
)
from schemas.observations import ToolError, ToolResult

__all__ = ["HarnessState", "Planner", "ToolRunner", "NO_ANSWER"]

logger = logging.getLogger(__name__)

#: What the simulated user says when no scripted answer matches the question.
NO_ANSWER = "I don't know"

#: Runs one tool call on the device: (name, arguments) → ToolResult.
ToolRunner = Callable[[str, dict[str, Any]], ToolResult]

_CHECK_PLAN = compile_validator(PLAN_SCHEMA)


@dataclass
class HarnessState:
    """What a real device does not hold: memory, scripted user answers, the answer, the log."""

    memory: dict[str, Any] = field(default_factory=dict)
    user_answers: dict[str, str] = field(default_factory=dict)
    answer: str | None = None
    goal_status: str | None = None
    done: bool = False
    log: list[LogEntry] = field(default_factory=list)

    def copy(self) -> HarnessState:
        return HarnessState(copy_json(self.memory), dict(self.user_answers), self.answer,
                            self.goal_status, self.done, list(self.log))


def _fail(name: str, code: str, message: str) -> ToolResult:
    return ToolResult(name=name, ok=False, error=ToolError(code=code, message=message))  # type: ignore[arg-type]


class Planner:
    """Carries out planner actions against a HarnessState and a device's tool runner."""

    def __init__(self, state: HarnessState, run_tool: ToolRunner) -> None:
        self.state = state
        self.run_tool = run_tool

    def _log(self, step: int, kind: str, name: str, arguments: dict[str, Any], ok: bool,
             agent: str = "main", parent: str | None = None) -> None:
        self.state.log.append(LogEntry(step, kind, name, copy_json(arguments), ok, agent, parent))  # type: ignore[arg-type]

    def tool(self, step: int, name: str, arguments: dict[str, Any], *, agent: str = "main",
             parent: str | None = None) -> ToolResult:
        result = self.run_tool(name, arguments)
        self._log(step, "tool_call", name, arguments, result.ok, agent, parent)
        return result

    def handle(self, step: int, action: Any) -> ToolResult:
        """One planner (or answer/status) action → its result."""
        if isinstance(action, ToolCall):
            return self.tool(step, action.name, dict(action.arguments))
        if isinstance(action, MemoryWrite):
            self.state.memory[action.key] = copy_json(action.value)
            self._log(step, "memory_write", action.key, {"value": action.value}, True)
            return ToolResult(name="memory_write", ok=True, value={"key": action.key})
        if isinstance(action, MemoryRead):
            return self._memory_read(step, action)
        if isinstance(action, AskUser):
            return self._ask(step, action.question)
        if isinstance(action, (Answer, Finish)):
            text = action.text if isinstance(action, Answer) else action.answer
            if text is not None:
                self.state.answer = text if isinstance(text, str) else json.dumps(text)
            self._log(step, "answer", action.action_type, {"answer": text}, True)
            if isinstance(action, Finish):
                self.state.done = True
            return ToolResult(name=action.action_type, ok=True, value=self.state.answer)
        if isinstance(action, Status):
            self.state.goal_status = action.goal_status
            self.state.done = True
            return ToolResult(name="status", ok=True, value=action.goal_status)
        if isinstance(action, UseSkill):
            return self._skill(step, action)
        if isinstance(action, Delegate):
            return self._delegate(step, action)
        return _fail(action.action_type, "unsupported", f"{action.action_type} is not a planner action.")

    def _memory_read(self, step: int, action: MemoryRead) -> ToolResult:
        if action.key is not None:
            found = action.key in self.state.memory
            self._log(step, "memory_read", action.key, {"key": action.key}, found)
            if not found:
                return _fail("memory_read", "not_found", f"Nothing is remembered under '{action.key}'.")
            return ToolResult(name="memory_read", ok=True,
                              value={"key": action.key, "value": copy_json(self.state.memory[action.key])})
        query = (action.query or "").lower()
        hits = {k: copy_json(v) for k, v in self.state.memory.items()
                if query in k.lower() or query in json.dumps(v, ensure_ascii=False).lower()}
        self._log(step, "memory_read", "query", {"query": action.query}, True)
        return ToolResult(name="memory_read", ok=True, value=hits)

    def _ask(self, step: int, question: str) -> ToolResult:
        lowered = question.lower()
        reply = next((text for keyword, text in self.state.user_answers.items()
                      if keyword.lower() in lowered), NO_ANSWER)
        self._log(step, "ask_user", "ask_user", {"question": question}, reply != NO_ANSWER)
        return ToolResult(name="ask_user", ok=True, value=reply)

    def _skill(self, step: int, action: UseSkill) -> ToolResult:
        skill = SKILLS.get(action.skill)
        if skill is None:
            self._log(step, "skill", action.skill, dict(action.arguments), False)
            return _fail(action.skill, "unknown_tool", f"There is no skill named '{action.skill}'.")
        try:
            args = prepare_arguments(skill, dict(action.arguments))
        except BadArguments as error:
            self._log(step, "skill", skill.name, dict(action.arguments), False)
            return _fail(skill.name, "bad_arguments", error.message)
        results = []
        ok = True
        for item in skill.steps:
            if item.when is not None and not args.get(item.when):
                continue
            result = self.tool(step, item.tool, render_arguments(item, args), parent=skill.name)
            results.append(result.model_dump(mode="json"))
            if not result.ok:
                ok = False
                break
        self._log(step, "skill", skill.name, dict(action.arguments), ok)
        if not ok:
            failed = results[-1]["error"]
            return ToolResult(name=skill.name, ok=False, value={"steps": results},
                              error=ToolError(**failed))
        return ToolResult(name=skill.name, ok=True, value={"steps": results})

    def _delegate(self, step: int, action: Delegate) -> ToolResult:
        agent = SUBAGENTS.get(action.agent)
        name = f"delegate:{action.agent}"
        if agent is None:
            self._log(step, "delegate", action.agent, dict(action.arguments), False)
            return _fail(name, "unknown_tool", f"There is no sub-agent named '{action.agent}'.")
        try:
            plan = _CHECK_PLAN(dict(action.arguments))
        except BadArguments as error:
            self._log(step, "delegate", agent.name, dict(action.arguments), False)
            return _fail(name, "bad_arguments", error.message)
        results = []
        ok = True
        for call in plan["tool_calls"]:
            tool_name, arguments = call["name"], dict(call.get("arguments") or {})
            if not agent.may_call(tool_name):
                self._log(step, "tool_call", tool_name, arguments, False, agent.name, name)
                result = _fail(tool_name, "permission_denied",
                               f"Sub-agent '{agent.name}' may not call {tool_name}.")
            else:
                result = self.tool(step, tool_name, arguments, agent=agent.name, parent=name)
            results.append(result.model_dump(mode="json"))
            ok = ok and result.ok
        self._log(step, "delegate", agent.name, dict(action.arguments), ok)
        return ToolResult(name=name, ok=ok, value={"results": results},
                          error=None if ok else ToolError(code="permission_denied" if any(
                              r["error"] and r["error"]["code"] == "permission_denied"
                              for r in results) else "conflict",
                              message="Some of the sub-agent's tool calls failed."))
