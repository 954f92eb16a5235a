"""Planner actions every phone shares: memory, skills, delegation, ask_user, answer, finish, status.

SimPhone runs them against its SimState and AdbPhone against its harness-side state (the
skill and sub-agent libraries live in this package);
both expose the small `PlannerState` surface below and a `call_tool` that runs and
logs one tool call, so results and log entries have one shape and one checker reads both.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from devices.sim.skills import SKILLS, prepare_arguments, render_arguments
from devices.sim.state import LogEntry
from devices.sim.subagents import PLAN_SCHEMA, SUBAGENTS
from devices.sim.tools import BadArguments, compile_validator
from schemas.observations import ToolError, ToolResult

__all__ = ["DONT_KNOW", "PLANNER_ACTIONS", "CallTool", "PlannerState", "run_planner_action",
           "tool_error", "tool_ok"]

logger = logging.getLogger(__name__)

#: What the simulated user says when no scripted answer matches the question.
DONT_KNOW = "I don't know."
_CHECK_PLAN = compile_validator(PLAN_SCHEMA)


class PlannerState(Protocol):
    """What planner actions read and write on a device (or beside it, for a real phone)."""

    step: int
    answer: str | None
    goal_status: str | None
    done: bool
    user_answers: Mapping[str, str]

    def memory_get(self, key: str) -> Any: ...

    def memory_set(self, key: str, value: Any) -> None: ...

    def memory_items(self) -> Iterable[tuple[str, Any]]: ...

    def append_log(self, entry: LogEntry) -> int: ...

    def replace_log(self, index: int, entry: LogEntry) -> None: ...


class CallTool(Protocol):
    """Runs one tool call on the device and logs it as a `tool_call` entry."""

    def __call__(self, name: str, arguments: dict[str, Any], *, agent: str = "main",
                 parent: str | None = None) -> ToolResult: ...


# Results are built without re-validation: every field comes from this module or a tool
# result (the producer re-validates constructed values before they go on the wire).
def tool_ok(name: str, value: Any) -> ToolResult:
    return ToolResult.model_construct(name=name, ok=True, value=value, error=None)


def tool_error(name: str, code: str, message: str, retryable: bool = False) -> ToolResult:
    return ToolResult.model_construct(
        name=name, ok=False, value=None,
        error=ToolError.model_construct(code=code, message=message, retryable=retryable))


def _result_dict(result: ToolResult) -> dict[str, Any]:
    out: dict[str, Any] = {"name": result.name, "ok": result.ok, "value": result.value}
    if result.error is not None:
        out["error"] = {"code": result.error.code, "message": result.error.message}
    return out


def _log(state: PlannerState, kind: str, name: str, arguments: dict[str, Any], ok: bool,
         agent: str = "main", parent: str | None = None) -> int:
    return state.append_log(LogEntry(state.step, kind, name, arguments, ok, agent, parent))  # type: ignore[arg-type]


def run_planner_action(state: PlannerState, action: Any, call_tool: CallTool
                       ) -> tuple[ToolResult, str | None]:
    """Carries out one planner action; returns its result and a message for the agent, if any."""
    handler = _HANDLERS.get(action.action_type)
    if handler is None:
        return tool_error(action.action_type, "unsupported",
                          f"{action.action_type} is not a planner action."), None
    return handler(state, action, call_tool)


def _tool_call(state: PlannerState, action: Any, call_tool: CallTool
               ) -> tuple[ToolResult, str | None]:
    return call_tool(action.name, dict(action.arguments)), None


def _memory_read(state: PlannerState, action: Any, call_tool: CallTool
                 ) -> tuple[ToolResult, str | None]:
    if action.key is not None:
        args: dict[str, Any] = {"key": action.key}
        value = state.memory_get(action.key)
        if value is None:
            result = tool_error("memory_read", "not_found", f"Memory has no key '{action.key}'.")
        else:
            result = tool_ok("memory_read", {"key": action.key, "value": value})
    else:
        args = {"query": action.query}
        query = action.query.lower()
        hits = {k: v for k, v in state.memory_items()
                if query in k.lower()
                or query in (v if isinstance(v, str) else json.dumps(v)).lower()}
        result = tool_ok("memory_read", hits)
    _log(state, "memory_read", "memory_read", args, result.ok)
    return result, None


def _memory_write(state: PlannerState, action: Any, call_tool: CallTool
                  ) -> tuple[ToolResult, str | None]:
    previous = state.memory_get(action.key)
    state.memory_set(action.key, action.value)
    _log(state, "memory_write", "memory_write", {"key": action.key, "value": action.value}, True)
    return tool_ok("memory_write", {"key": action.key, "previous": previous}), None


def _use_skill(state: PlannerState, action: Any, call_tool: CallTool
               ) -> tuple[ToolResult, str | None]:
    slot = _log(state, "skill", action.skill, dict(action.arguments), False)
    skill = SKILLS.get(action.skill)
    if skill is None:
        return tool_error("use_skill", "not_found", f"There is no skill '{action.skill}'; use one "
                                                    f"of {', '.join(SKILLS)}."), None
    try:
        args = prepare_arguments(skill, dict(action.arguments))
    except BadArguments as exc:
        return tool_error("use_skill", "bad_arguments", exc.message), None
    steps = []
    failed: ToolResult | None = None
    for step in skill.steps:
        if step.when is not None and not args.get(step.when):
            continue
        result = call_tool(step.tool, render_arguments(step, args), parent=skill.name)
        steps.append(_result_dict(result))
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


def _delegate(state: PlannerState, action: Any, call_tool: CallTool
              ) -> tuple[ToolResult, str | None]:
    logged = {"instruction": action.instruction, "arguments": dict(action.arguments)}
    slot = _log(state, "delegate", action.agent, logged, False)
    agent = SUBAGENTS.get(action.agent)
    if agent is None:
        return tool_error("delegate", "not_found", f"There is no sub-agent '{action.agent}'; use "
                                                   f"one of {', '.join(SUBAGENTS)}."), None
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


def _ask_user(state: PlannerState, action: Any, call_tool: CallTool
              ) -> tuple[ToolResult, str | None]:
    question = action.question.lower()
    reply = next((r for k, r in state.user_answers.items() if k.lower() in question), DONT_KNOW)
    _log(state, "ask_user", "ask_user", {"question": action.question}, reply != DONT_KNOW)
    return tool_ok("ask_user", reply), reply


def _answer(state: PlannerState, action: Any, call_tool: CallTool
            ) -> tuple[ToolResult, str | None]:
    state.answer = action.text
    _log(state, "answer", "answer", {"text": action.text}, True)
    return tool_ok("answer", action.text), None


def _finish(state: PlannerState, action: Any, call_tool: CallTool
            ) -> tuple[ToolResult, str | None]:
    if action.answer is not None:
        answer = action.answer
        state.answer = answer if isinstance(answer, str) else json.dumps(answer)
    state.done = True
    _log(state, "answer", "finish", {"answer": action.answer}, True)
    return tool_ok("finish", state.answer), None


def _status(state: PlannerState, action: Any, call_tool: CallTool
            ) -> tuple[ToolResult, str | None]:
    state.goal_status = action.goal_status
    state.done = True
    _log(state, "gui", "status", {"goal_status": action.goal_status}, True)
    return tool_ok("status", action.goal_status), None


_Handler = Callable[[PlannerState, Any, CallTool], tuple[ToolResult, str | None]]
_HANDLERS: dict[str, _Handler] = {
    "tool_call": _tool_call, "memory_read": _memory_read, "memory_write": _memory_write,
    "use_skill": _use_skill, "delegate": _delegate, "ask_user": _ask_user, "answer": _answer,
    "finish": _finish, "status": _status,
}
#: The action types `run_planner_action` handles.
PLANNER_ACTIONS = frozenset(_HANDLERS)
