"""Harness-side planner actions for a real device: memory, ask_user, answer/finish/status, and
skills and delegations expanded into tool calls over adb. The agent's memory and the user's
answers live here, not on the phone. Results and log entries have the sim phone's shapes
(devices.sim.phone), so one checker reads both backends."""

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
    Answer,
    AskUser,
    Delegate,
    Finish,
    MemoryRead,
    MemoryWrite,
    Status,
    ToolCall,
    UseSkill,
)
from schemas.observations import ToolError, ToolResult

__all__ = ["DONT_KNOW", "HarnessState", "Planner", "ToolRunner"]

logger = logging.getLogger(__name__)

#: What the simulated user says when no scripted answer matches (as on the sim phone).
DONT_KNOW = "I don't know."

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


def _result_dict(result: ToolResult) -> dict[str, Any]:
    out: dict[str, Any] = {"name": result.name, "ok": result.ok, "value": result.value}
    if result.error is not None:
        out["error"] = {"code": result.error.code, "message": result.error.message}
    return out


class Planner:
    """Carries out planner actions against a HarnessState and a device's tool runner."""

    def __init__(self, state: HarnessState, run_tool: ToolRunner) -> None:
        self.state = state
        self.run_tool = run_tool

    def _log(self, step: int, kind: str, name: str, arguments: dict[str, Any], ok: bool,
             agent: str = "main", parent: str | None = None) -> int:
        self.state.log.append(LogEntry(step, kind, name, copy_json(arguments), ok, agent, parent))  # type: ignore[arg-type]
        return len(self.state.log) - 1

    def tool(self, step: int, name: str, arguments: dict[str, Any], *, agent: str = "main",
             parent: str | None = None) -> ToolResult:
        result = self.run_tool(name, arguments)
        self._log(step, "tool_call", name, arguments, result.ok, agent, parent)
        return result

    def handle(self, step: int, action: Any) -> ToolResult:
        """One planner action (or answer/status) → its result."""
        state = self.state
        if isinstance(action, ToolCall):
            return self.tool(step, action.name, dict(action.arguments))
        if isinstance(action, MemoryWrite):
            previous = state.memory.get(action.key)
            state.memory[action.key] = copy_json(action.value)
            self._log(step, "memory_write", "memory_write",
                      {"key": action.key, "value": action.value}, True)
            return ToolResult(name="memory_write", ok=True,
                              value={"key": action.key, "previous": previous})
        if isinstance(action, MemoryRead):
            return self._memory_read(step, action)
        if isinstance(action, AskUser):
            lowered = action.question.lower()
            reply = next((text for keyword, text in state.user_answers.items()
                          if keyword.lower() in lowered), DONT_KNOW)
            self._log(step, "ask_user", "ask_user", {"question": action.question},
                      reply != DONT_KNOW)
            return ToolResult(name="ask_user", ok=True, value=reply)
        if isinstance(action, Answer):
            state.answer = action.text
            self._log(step, "answer", "answer", {"text": action.text}, True)
            return ToolResult(name="answer", ok=True, value=action.text)
        if isinstance(action, Finish):
            if action.answer is not None:
                state.answer = (action.answer if isinstance(action.answer, str)
                                else json.dumps(action.answer))
            state.done = True
            self._log(step, "answer", "finish", {"answer": action.answer}, True)
            return ToolResult(name="finish", ok=True, value=state.answer)
        if isinstance(action, Status):
            state.goal_status = action.goal_status
            state.done = True
            self._log(step, "gui", "status", {"goal_status": action.goal_status}, True)
            return ToolResult(name="status", ok=True, value=action.goal_status)
        if isinstance(action, UseSkill):
            return self._skill(step, action)
        if isinstance(action, Delegate):
            return self._delegate(step, action)
        return _fail(action.action_type, "unsupported",
                     f"{action.action_type} is not a planner action.")

    def _memory_read(self, step: int, action: MemoryRead) -> ToolResult:
        memory = self.state.memory
        if action.key is not None:
            args: dict[str, Any] = {"key": action.key}
            if memory.get(action.key) is None:
                result = _fail("memory_read", "not_found", f"Memory has no key '{action.key}'.")
            else:
                result = ToolResult(name="memory_read", ok=True,
                                    value={"key": action.key, "value": copy_json(memory[action.key])})
        else:
            args = {"query": action.query}
            query = (action.query or "").lower()
            hits = {k: copy_json(v) for k, v in memory.items()
                    if query in k.lower()
                    or query in (v if isinstance(v, str) else json.dumps(v)).lower()}
            result = ToolResult(name="memory_read", ok=True, value=hits)
        self._log(step, "memory_read", "memory_read", args, result.ok)
        return result

    def _skill(self, step: int, action: UseSkill) -> ToolResult:
        slot = self._log(step, "skill", action.skill, dict(action.arguments), False)
        skill = SKILLS.get(action.skill)
        if skill is None:
            return _fail("use_skill", "not_found",
                         f"There is no skill '{action.skill}'; use one of {', '.join(SKILLS)}.")
        try:
            args = prepare_arguments(skill, dict(action.arguments))
        except BadArguments as error:
            return _fail("use_skill", "bad_arguments", error.message)
        steps = []
        failed: ToolResult | None = None
        for item in skill.steps:
            if item.when is not None and not args.get(item.when):
                continue
            result = self.tool(step, item.tool, render_arguments(item, args), parent=skill.name)
            steps.append(_result_dict(result))
            if not result.ok:
                failed = result
                break
        self.state.log[slot] = LogEntry(step, "skill", skill.name, copy_json(dict(action.arguments)),
                                        failed is None)
        value = {"skill": skill.name, "steps": steps}
        if failed is not None:
            return ToolResult(name="use_skill", ok=False, value=value, error=failed.error)
        return ToolResult(name="use_skill", ok=True, value=value)

    def _delegate(self, step: int, action: Delegate) -> ToolResult:
        logged = {"instruction": action.instruction, "arguments": dict(action.arguments)}
        slot = self._log(step, "delegate", action.agent, logged, False)
        agent = SUBAGENTS.get(action.agent)
        if agent is None:
            return _fail("delegate", "not_found", f"There is no sub-agent '{action.agent}'; use "
                                                  f"one of {', '.join(SUBAGENTS)}.")
        try:
            plan = _CHECK_PLAN(dict(action.arguments))
        except BadArguments as error:
            return _fail("delegate", "bad_arguments", error.message)
        results = []
        first_error: ToolError | None = None
        for call in plan["tool_calls"]:
            name, arguments = call["name"], dict(call.get("arguments") or {})
            if not agent.may_call(name):
                result = _fail(name, "permission_denied",
                               f"Sub-agent '{agent.name}' may not use '{name}'; it may use "
                               f"{', '.join(sorted(agent.apps))} only.")
                self._log(step, "tool_call", name, arguments, False, agent.name, agent.name)
            else:
                result = self.tool(step, name, arguments, agent=agent.name, parent=agent.name)
            results.append(_result_dict(result))
            if not result.ok and first_error is None:
                first_error = result.error
        ok = first_error is None
        self.state.log[slot] = LogEntry(step, "delegate", agent.name, copy_json(logged), ok)
        value = {"agent": agent.name, "instruction": action.instruction, "results": results}
        return ToolResult(name="delegate", ok=ok, value=value, error=first_error)
