"""Planner actions, run by the harness beside any device: memory, skills, delegation, ask_user,
answer, finish and status.

Each handler reads and writes the harness state (memory, log, answer) and reaches the device
only through `call_tool`, which runs one tool call on the device and logs it, so results and
log entries have one shape on a simulated and a real phone and one checker reads both.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from devices.harness.memory import rank
from devices.harness.skills import prepare_arguments, render_arguments
from devices.harness.spec import HarnessSpec
from devices.harness.subagents import PLAN_SCHEMA
from devices.kit.errors import BadArguments, tool_error, tool_ok
from devices.kit.log import LogEntry
from devices.kit.validators import compile_validator
from schemas.observations import ToolError, ToolResult

__all__ = ["DONT_KNOW", "PLANNER_ACTIONS", "CallTool", "PlannerState", "run_planner_action",
           "tool_error", "tool_ok"]

logger = logging.getLogger(__name__)

#: What the simulated user says when no scripted answer matches the question.
DONT_KNOW = "I don't know."
_CHECK_PLAN = compile_validator(PLAN_SCHEMA)


class PlannerState(Protocol):
    """What planner actions read and write beside the device."""

    step: int
    answer: str | None
    goal_status: str | None
    done: bool
    user_answers: Mapping[str, str]

    def memory_get(self, key: str) -> Any: ...

    def memory_set(self, key: str, value: Any) -> None: ...

    def memory_forget(self, key: str) -> Any: ...

    def memory_items(self) -> Iterable[tuple[str, Any]]: ...

    def append_log(self, entry: LogEntry) -> int: ...

    def replace_log(self, index: int, entry: LogEntry) -> None: ...


class CallTool(Protocol):
    """Runs one tool call on the device and logs it as a `tool_call` entry."""

    def __call__(self, name: str, arguments: dict[str, Any], *, agent: str = "main",
                 parent: str | None = None) -> ToolResult: ...


def _result_dict(result: ToolResult) -> dict[str, Any]:
    out: dict[str, Any] = {"name": result.name, "ok": result.ok, "value": result.value}
    if result.error is not None:
        out["error"] = {"code": result.error.code, "message": result.error.message}
    return out


def _log(state: PlannerState, kind: str, name: str, arguments: dict[str, Any], ok: bool,
         agent: str = "main", parent: str | None = None) -> int:
    return state.append_log(LogEntry(state.step, kind, name, arguments, ok, agent, parent))  # type: ignore[arg-type]


def run_planner_action(state: PlannerState, action: Any, call_tool: CallTool,
                       spec: HarnessSpec | None = None) -> tuple[ToolResult, str | None]:
    """Carries out one planner action; returns its result and a message for the agent, if any."""
    handler = _HANDLERS.get(action.action_type)
    if handler is None:
        return tool_error(action.action_type, "unsupported",
                          f"{action.action_type} is not a planner action."), None
    return handler(state, action, call_tool, spec or HarnessSpec.default())


def _memory_read(state: PlannerState, action: Any, call_tool: CallTool, spec: HarnessSpec
                 ) -> tuple[ToolResult, str | None]:
    if action.key is not None:
        args: dict[str, Any] = {"key": action.key}
        value = state.memory_get(action.key)
        if value is None:
            result = tool_error("memory_read", "not_found",
                                f"Memory has no key '{action.key}'; search it with a query.")
        else:
            result = tool_ok("memory_read", {"key": action.key, "value": value})
    else:
        args = {"query": action.query}
        hits = rank(action.query, state.memory_items(), spec.memory.top_k)
        result = tool_ok("memory_read", dict(hits))
    _log(state, "memory_read", "memory_read", args, result.ok)
    return result, None


def _memory_write(state: PlannerState, action: Any, call_tool: CallTool, spec: HarnessSpec
                  ) -> tuple[ToolResult, str | None]:
    """Writes an entry; a null value forgets the key."""
    if action.value is None:
        previous = state.memory_forget(action.key)
    else:
        previous = state.memory_get(action.key)
        state.memory_set(action.key, action.value)
    _log(state, "memory_write", "memory_write", {"key": action.key, "value": action.value}, True)
    return tool_ok("memory_write", {"key": action.key, "previous": previous}), None


def _not_found(action_type: str, noun: str, name: str, known: Sequence[Any]) -> ToolResult:
    """The error for a skill or sub-agent the harness does not have, naming the ones it has."""
    names = ", ".join(entry.name for entry in known)
    return tool_error(action_type, "not_found", f"There is no {noun} '{name}'; use one of {names}.")


def _use_skill(state: PlannerState, action: Any, call_tool: CallTool, spec: HarnessSpec
               ) -> tuple[ToolResult, str | None]:
    slot = _log(state, "skill", action.skill, dict(action.arguments), False)
    skill = spec.skill(action.skill)
    if skill is None:
        return _not_found("use_skill", "skill", action.skill, spec.skills), None
    try:
        args = prepare_arguments(skill, dict(action.arguments))
    except BadArguments as exc:
        return tool_error("use_skill", "bad_arguments", exc.message), None
    steps: list[dict[str, Any]] = []
    values: list[Any] = []
    failed: ToolResult | None = None
    for step in skill.steps:
        if step.when is not None and not args.get(step.when):
            values.append(None)
            continue
        result = call_tool(step.tool, render_arguments(step, args, values), parent=skill.name)
        steps.append(_result_dict(result))
        values.append(result.value)
        if not result.ok:
            failed = result
            break
    state.replace_log(slot, LogEntry(state.step, "skill", skill.name, dict(action.arguments),
                                     failed is None))
    value = {"skill": skill.name, "steps": steps}
    if failed is not None:
        return ToolResult.model_construct(name="use_skill", ok=False, value=value,
                                          error=failed.error), None
    return tool_ok("use_skill", value), None


def _delegate(state: PlannerState, action: Any, call_tool: CallTool, spec: HarnessSpec
              ) -> tuple[ToolResult, str | None]:
    logged = {"instruction": action.instruction, "arguments": dict(action.arguments)}
    slot = _log(state, "delegate", action.agent, logged, False)
    agent = spec.subagent(action.agent)
    if agent is None:
        return _not_found("delegate", "sub-agent", action.agent, spec.subagents), None
    try:
        plan = _CHECK_PLAN(dict(action.arguments))
    except BadArguments as exc:
        return tool_error("delegate", "bad_arguments", exc.message), None
    results = []
    first_error: ToolError | None = None
    for call in plan["tool_calls"]:
        name, arguments = call["name"], dict(call.get("arguments") or {})
        if not agent.may_call(name):
            result = tool_error(name, "permission_denied",
                                f"Sub-agent '{agent.name}' may not use '{name}'; it may use "
                                f"{', '.join(sorted(agent.apps))} only.")
            _log(state, "tool_call", name, arguments, False, agent.name, agent.name)
        else:
            result = call_tool(name, arguments, agent=agent.name, parent=agent.name)
        results.append(_result_dict(result))
        if not result.ok and first_error is None:
            first_error = result.error
    ok = first_error is None
    state.replace_log(slot, LogEntry(state.step, "delegate", agent.name, logged, ok))
    value = {"agent": agent.name, "instruction": action.instruction, "results": results}
    return ToolResult.model_construct(name="delegate", ok=ok, value=value,
                                      error=first_error), None


def _ask_user(state: PlannerState, action: Any, call_tool: CallTool, spec: HarnessSpec
              ) -> tuple[ToolResult, str | None]:
    question = action.question.lower()
    reply = next((r for k, r in state.user_answers.items() if k.lower() in question), DONT_KNOW)
    _log(state, "ask_user", "ask_user", {"question": action.question}, reply != DONT_KNOW)
    return tool_ok("ask_user", reply), reply


def _answer(state: PlannerState, action: Any, call_tool: CallTool, spec: HarnessSpec
            ) -> tuple[ToolResult, str | None]:
    state.answer = action.text
    _log(state, "answer", "answer", {"text": action.text}, True)
    return tool_ok("answer", action.text), None


def _finish(state: PlannerState, action: Any, call_tool: CallTool, spec: HarnessSpec
            ) -> tuple[ToolResult, str | None]:
    if action.answer is not None:
        answer = action.answer
        state.answer = answer if isinstance(answer, str) else json.dumps(answer)
    state.done = True
    _log(state, "answer", "finish", {"answer": action.answer}, True)
    return tool_ok("finish", state.answer), None


def _status(state: PlannerState, action: Any, call_tool: CallTool, spec: HarnessSpec
            ) -> tuple[ToolResult, str | None]:
    state.goal_status = action.goal_status
    state.done = True
    _log(state, "gui", "status", {"goal_status": action.goal_status}, True)
    return tool_ok("status", action.goal_status), None


_Handler = Callable[[PlannerState, Any, CallTool, HarnessSpec], tuple[ToolResult, str | None]]
_HANDLERS: dict[str, _Handler] = {
    "memory_read": _memory_read, "memory_write": _memory_write, "use_skill": _use_skill,
    "delegate": _delegate, "ask_user": _ask_user, "answer": _answer, "finish": _finish,
    "status": _status,
}
#: The action types the harness runs itself (tool calls and GUI actions go to the device).
PLANNER_ACTIONS = frozenset(_HANDLERS)
