"""Harness: wraps any Device (SimPhone, AdbPhone) with memory, skills, sub-agents, the tool
catalogue and the action log, configured by a HarnessSpec.

Device actions (tool calls and GUI actions) go to the device; planner actions (memory,
use_skill, delegate, ask_user, answer, finish, status) run here, reaching the device only
through tool calls. The harness implements the Device protocol itself, so anything that drives
a device can drive a harnessed one, and `final_state()` gives the JSON a checker scores.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from devices.harness.catalogue import Catalogue, catalogue_of, tool_entries
from devices.harness.planner import PLANNER_ACTIONS, run_planner_action, tool_error
from devices.harness.spec import SEEN_PREFIX, HarnessSpec
from devices.harness.state import HarnessState
from devices.kit.apps import DEFAULT_TASK
from devices.kit.final_state import StateView
from devices.kit.log import LogEntry, copy_json
from devices.protocol import Device, TaskInstance, declares_bounded_calls
from schemas.actions import ToolCall
from schemas.observations import Observation, ToolResult

__all__ = ["HARNESS_SECTIONS", "Harness", "HarnessSnapshot", "Step"]

logger = logging.getLogger(__name__)

#: Parts of a task's initial_state the harness loads (a device never sees them).
HARNESS_SECTIONS = frozenset({"memory", "user"})


@dataclass(frozen=True, slots=True)
class Step:
    """One action and the observation it led to (the context renderer shows the latest few)."""

    action: Any
    observation: Observation


@dataclass(frozen=True, slots=True)
class HarnessSnapshot:
    device: Any
    state: HarnessState
    history: tuple[Step, ...]
    task: TaskInstance


class Harness:
    """A device plus the agent's harness; implements devices.protocol.Device."""

    def __init__(self, device: Device, spec: HarnessSpec | None = None, *,
                 subagent_policy: Callable[[str], Any] | None = None) -> None:
        self.device = device
        # The spec in its canonical form (dict keys sorted, as the version hashes it and the
        # registry stores it): a harness behaves the same for the same version whether its
        # spec was built in memory or loaded from JSON, e.g. skill parameters reach a policy
        # in one order, so a rollback repeats the earlier episodes exactly.
        self.spec = (spec or HarnessSpec.default()).canonical()
        # Builds the policy a sub-agent runs when it is handed a task without a plan (the same
        # policy as the main agent, typically); None: sub-agents only run plans.
        self.subagent_policy = subagent_policy
        self.state = HarnessState()
        self.history: list[Step] = []
        self.task: TaskInstance | None = None
        # Every tool entry once; each reset picks its task's apps from them (catalogue_of).
        self._tool_entries = tool_entries(self.spec, self._device_tools())
        self._catalogue = catalogue_of(self.spec, self._tool_entries)
        self._first: Observation | None = None
        self._header: str | None = None

    @property
    def bounded_calls(self) -> bool:
        """True when no call can block: the device's calls are bounded in-process work and no
        sub-agent runs a policy of its own (a caller may then skip its per-call timeout)."""
        return declares_bounded_calls(self.device) and self.subagent_policy is None

    # ---- identity ----------------------------------------------------------------------
    @property
    def device_id(self) -> str:
        return self.device.device_id

    @property
    def version(self) -> str:
        """The harness spec's version; every episode names it."""
        return self.spec.version

    @property
    def tools(self) -> dict[str, Any]:
        """The catalogue's tools by name (each with app, description and parameters)."""
        return {t.name: t for t in self._catalogue.tools}

    def view(self) -> StateView:
        """The final state so far, with the read API checkers use."""
        return StateView.from_json(self.final_state())

    def catalogue(self) -> Catalogue:
        """What the policy may call in the current task (tools of the task's apps only)."""
        return self._catalogue

    # ---- Device protocol ---------------------------------------------------------------
    def reset(self, task: TaskInstance) -> Observation:
        """Resets the device to the task's device state and the harness to its memory and user."""
        initial = dict(task.initial_state)
        device_part = {k: v for k, v in initial.items() if k not in HARNESS_SECTIONS}
        observation = self.device.reset(task.model_copy(update={"initial_state": device_part}))
        user = initial.get("user") or {}
        answers = user.get("answers", {}) if isinstance(user, dict) else {}
        memory = initial.get("memory") or {}
        self.state = HarnessState(memory=copy_json(dict(memory)) if isinstance(memory, dict) else {},
                                  user_answers={str(k): str(v) for k, v in answers.items()})
        self.task = task
        self.history = []
        self._catalogue = catalogue_of(self.spec, self._tool_entries, getattr(task, "apps", None) or ())
        self._first = observation
        self._header = None
        return observation

    def observe(self) -> Observation:
        return self._mark_done(self.device.observe())

    def act(self, action: Any) -> Observation:
        """One action: planner actions run here, everything else on the device."""
        if self.state.done:
            current = self.device.observe()
            return current.model_copy(update={"done": True, "message": None, "result": tool_error(
                action.action_type, "conflict",
                "The episode has ended; reset the phone to start another.")})
        kind = action.action_type
        if kind in PLANNER_ACTIONS:
            observation = self._planner(action)
        elif kind == "tool_call" and not self._allowed(action.name):
            observation = self._refuse_tool(action)
        else:
            observation = self.device.act(action)
            self.state.step = observation.step
            self._log_device_action(action, observation.result)
            if kind == "tool_call":
                self._remember(action.name, observation.result)
        observation = self._mark_done(observation)
        self.history.append(Step(action, observation))
        return observation

    def snapshot(self) -> HarnessSnapshot:
        task = self.task or DEFAULT_TASK
        return HarnessSnapshot(self.device.snapshot(), self.state.copy(), tuple(self.history),
                               task)

    def restore(self, snapshot: HarnessSnapshot) -> None:
        self.device.restore(snapshot.device)
        self.state = snapshot.state.copy()
        self.history = list(snapshot.history)

    def fork(self) -> Harness:
        twin = Harness(self.device.fork(), self.spec, subagent_policy=self.subagent_policy)
        twin.state = self.state.copy()
        twin.history = list(self.history)
        twin.task = self.task
        twin._catalogue = self._catalogue
        twin._first, twin._header = self._first, self._header
        return twin

    def close(self) -> None:
        self.device.close()

    # ---- what checkers and the context read ----------------------------------------------
    def final_state(self, *, copy: bool = True) -> dict[str, Any]:
        """The episode's outcome as JSON (contract §3): device tables and settings from the
        device, memory, log, answer and goal status from the harness. `copy=False` may share
        rows and memory with the live episode: for a score taken before the next action (the
        generator's oracle check), never for a final state that is kept or published."""
        device_part = device_state(self.device, copy=copy)
        return {"tables": device_part["tables"], "settings": device_part["settings"],
                "memory": copy_json(self.state.memory) if copy else self.state.memory,
                "log": [e.to_dict() for e in self.state.log], "answer": self.state.answer,
                "goal_status": self.state.goal_status,
                "clock_ms": int(device_part.get("clock_ms", 0))}

    def context_header(self) -> str:
        """The first user message of this episode's context (devices.harness.context): goal,
        date, catalogue, the memory entries the spec shows up front, the first screen."""
        if self._header is None:
            from devices.harness.context import render_header
            from devices.harness.memory import rank

            goal = self.task.goal if self.task is not None else ""
            shown = self.spec.memory.context_entries
            memory = rank(goal, self.state.memory_items(), shown) if shown else ()
            self._header = render_header(goal, self._catalogue, self._first, memory=memory)
        return self._header

    def context_messages(self) -> list[dict[str, Any]]:
        """The chat a language-model policy answers next: the header and every past step."""
        from devices.harness.context import episode_messages

        return episode_messages(self.context_header(), [(s.action, s.observation) for s in self.history])

    def context(self) -> str:
        """`context_messages()` as JSON: the prompt a snapshot row holds for the next step."""
        return json.dumps(self.context_messages(), ensure_ascii=False)

    # ---- internals -----------------------------------------------------------------------
    def _device_tools(self) -> dict[str, Any]:
        return dict(getattr(self.device, "tools", {}) or {})

    def _planner(self, action: Any) -> Observation:
        """Spends the device step (the action runs on the last step too, as device actions
        do), runs the action here, then observes once."""
        self.state.step = self._advance()
        if (action.action_type == "delegate" and self.subagent_policy is not None
                and "tool_calls" not in action.arguments):
            result, message = self._run_subagent(action), None
        else:
            result, message = run_planner_action(self.state, action, self._call_tool, self.spec)
        after = self.device.observe()
        return after.model_copy(update={"result": result, "message": message})

    def _advance(self) -> int:
        """Advances the device one step (its `advance()`, when it has one); the new step."""
        advance = getattr(self.device, "advance", None)
        step = advance() if advance is not None else None
        return int(step) if step is not None else self.device.observe().step

    def _run_subagent(self, action: Any) -> ToolResult:
        """Runs the sub-agent's own policy on `action.instruction` with its own context (the
        instruction and `arguments.context`) and only its tools; returns its answer."""
        slot = self.state.append_log(LogEntry(self.state.step, "delegate", action.agent, {
            "instruction": action.instruction, "arguments": copy_json(dict(action.arguments))},
            False))
        agent = self.spec.subagent(action.agent)
        if agent is None:
            names = ", ".join(a.name for a in self.spec.subagents)
            return tool_error("delegate", "not_found",
                              f"There is no sub-agent '{action.agent}'; use one of {names}.")
        tools = [t for t in self._catalogue.tools if agent.may_call(t.name)]
        catalogue = Catalogue(tools=tools, playbook=list(self._catalogue.playbook))
        context = action.arguments.get("context")
        goal = action.instruction + (f"\nContext: {json.dumps(context, sort_keys=True)}"
                                     if context else "")
        policy = self.subagent_policy(agent.name)  # type: ignore[misc]
        policy.begin(goal, catalogue)
        observation = self.device.observe()
        steps: list[dict[str, Any]] = []
        answer: Any = None
        for _ in range(self.spec.delegation.max_steps):
            step = policy.next_action(observation)
            if step.action_type in ("answer", "finish"):
                answer = step.text if step.action_type == "answer" else step.answer
                break
            if step.action_type != "tool_call":
                result = tool_error(step.action_type, "unsupported",
                                    "A sub-agent may call its tools and answer, nothing else.")
            elif not agent.may_call(step.name):
                result = tool_error(step.name, "permission_denied",
                                    f"Sub-agent '{agent.name}' may not use '{step.name}'.")
                self.state.append_log(LogEntry(self.state.step, "tool_call", step.name,
                                               copy_json(dict(step.arguments)), False,
                                               agent.name, agent.name))
            else:
                result = self._call_tool(step.name, dict(step.arguments), agent=agent.name,
                                         parent=agent.name)
            steps.append({"name": result.name, "ok": result.ok, "value": result.value})
            observation = self.device.observe().model_copy(update={"result": result})
        ok = answer is not None
        self.state.replace_log(slot, LogEntry(self.state.step, "delegate", agent.name, {
            "instruction": action.instruction, "arguments": copy_json(dict(action.arguments))},
            ok))
        value = {"agent": agent.name, "instruction": action.instruction, "answer": answer,
                 "results": steps}
        if not ok:
            return ToolResult.model_construct(name="delegate", ok=False, value=value,
                                              error=tool_error("delegate", "timeout", (
                                                  f"Sub-agent '{agent.name}' did not answer "
                                                  f"within {self.spec.delegation.max_steps} "
                                                  "steps.")).error)
        return ToolResult.model_construct(name="delegate", ok=True, value=value, error=None)

    def _call_tool(self, name: str, arguments: dict[str, Any], *, agent: str = "main",
                   parent: str | None = None) -> ToolResult:
        """Runs one tool on the device without spending a step, and logs it here."""
        if not self._allowed(name):
            result = _not_in_catalogue(name)
        else:
            direct = getattr(self.device, "call_tool", None)
            if direct is not None:
                result = direct(name, dict(arguments))
            else:
                observed = self.device.act(ToolCall(name=name, arguments=arguments))
                result = observed.result or tool_error(name, "unsupported", "No tool result.")
        self.state.append_log(LogEntry(self.state.step, "tool_call", name, copy_json(arguments),
                                       bool(result.ok), agent, parent))  # type: ignore[arg-type]
        self._remember(name, result)
        return result

    def _remember(self, name: str, result: ToolResult | None) -> None:
        """Stores a successful result of a tool the memory policy names (MemoryPolicy.store)
        as the episode's note `note/seen/<tool>`."""
        if result is not None and result.ok and self.spec.memory.stores(name):
            self.state.seen[f"{SEEN_PREFIX}{name}"] = copy_json(result.value)

    def _allowed(self, name: str) -> bool:
        """A tool the catalogue shows, or one the device does not know (it then says so)."""
        return self._catalogue.tool(name) is not None or name not in self._device_tools()

    def _refuse_tool(self, action: Any) -> Observation:
        """A direct call of a tool outside the catalogue: a step spent, nothing run."""
        self.state.step = self._advance()
        result = _not_in_catalogue(action.name)
        self._log_device_action(action, result)
        return self.device.observe().model_copy(update={"result": result})

    def _log_device_action(self, action: Any, result: ToolResult | None) -> None:
        ok = result is None or bool(result.ok)
        if action.action_type == "tool_call":
            entry = LogEntry(self.state.step, "tool_call", action.name,
                             copy_json(dict(action.arguments)), ok)
        else:
            arguments = action.model_dump(mode="json", exclude={"action_type"}, exclude_none=True)
            entry = LogEntry(self.state.step, "gui", action.action_type, arguments, ok)
        self.state.append_log(entry)

    def _mark_done(self, observation: Observation) -> Observation:
        if observation.done:
            self.state.done = True
        elif self.state.done:
            observation = observation.model_copy(update={"done": True})
        return observation


def device_state(device: Any, *, copy: bool = True) -> dict[str, Any]:
    """The device part of a final state: {"tables": {app: {table: {id: row}}}, "settings",
    "clock_ms"}, from the device's own `device_state()`; `copy=False` lets a device that
    `shares_device_state` hand over its live rows (a scorer's read, before the next action)."""
    reader = getattr(device, "device_state", None)
    if reader is None:
        raise TypeError(f"{type(device).__name__} has no device_state(); a device must report "
                        "its tables and settings for checkers to score it")
    if not copy and getattr(device, "shares_device_state", False):
        return reader(copy=False)
    return reader()


def _not_in_catalogue(name: str) -> ToolResult:
    return tool_error(name, "unknown_tool",
                      f"Tool '{name}' is not in this task's catalogue; call one it lists.")
