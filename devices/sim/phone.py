"""SimPhone: the deterministic simulated phone that implements devices.protocol.Device."""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass
from typing import Any

from devices.kit.apps import DEFAULT_TASK
from devices.kit.steps import spend_step
from devices.protocol import TaskInstance
from devices.sim.apps import APP_MODULES
from devices.sim.faults import (
    GUI_FAULTS,
    SLOW_SCREEN_MS,
    TOOL_FAULTS,
    TOOL_TIMEOUT_MS,
    FaultInjector,
)
from devices.sim.gui import APP_LABELS, Gui, GuiError, resolve_app
from devices.sim.settings import SimSettings, load_settings
from devices.sim.state import LogEntry, SimSnapshot, SimState
from devices.sim.tools import REGISTRY, ToolFailure, ToolSpec, tool_error, tool_ok
from devices.sim.world import default_world
from schemas.observations import Observation, ToolResult

__all__ = ["DEFAULT_TASK", "PhoneSnapshot", "SimPhone", "initial_state_of"]

logger = logging.getLogger(__name__)

# Actions after which no fault is drawn: they touch neither an app nor a tool backend.
_NO_FAULT = frozenset({"wait", "navigate_home"})
_BASES: dict[int, SimSnapshot] = {}  # world seed → loaded default world (shared copy-on-write)
_FORKS = itertools.count(1)


@dataclass(frozen=True, slots=True)
class PhoneSnapshot:
    """An immutable handle on a SimPhone's whole state, fault generator included."""

    state: SimSnapshot
    fault_state: Any
    task_id: str


def _base(world_seed: int) -> SimSnapshot:
    if world_seed not in _BASES:
        state = SimState()
        state.load(default_world(world_seed))
        _BASES[world_seed] = state.freeze()
    return _BASES[world_seed]


def initial_state_of(task: TaskInstance, world_seed: int | None = None) -> SimState:
    """The state a SimPhone holds right after `reset(task)` (what checkers diff against)."""
    if world_seed is None:
        world_seed = SimSettings.model_fields["world_seed"].default
    state = SimState.thaw(_base(world_seed))
    state.clock_ms = task.start_clock_ms
    state.max_steps = task.max_steps
    state.load({}, dict(task.initial_state))
    return state


class SimPhone:
    """A seeded phone sandbox: ten apps, typed tools, UI trees, a step clock and injectable faults."""

    #: `device_state(copy=False)` can share its rows with the live state (a scorer's read).
    shares_device_state = True
    #: Every call is bounded in-process work that cannot block (no I/O, simulated time): a
    #: caller needs no timeout thread around it.
    bounded_calls = True

    def __init__(self, device_id: str = "sim-0", *, fault_rate: float = 0.0,
                 fault_seed: int | None = None, settings: SimSettings | None = None) -> None:
        self.device_id = device_id
        if settings is None:
            # Plain construction never reads the environment: the defaults plus these arguments.
            defaults = {name: f.default for name, f in SimSettings.model_fields.items()}
            settings = SimSettings.model_construct(**{**defaults, "fault_rate": fault_rate,
                                                      "fault_seed": fault_seed})
        self.settings = settings
        self.faults = FaultInjector(settings.fault_rate, settings.fault_seed)
        self.tools: dict[str, ToolSpec] = {name: t.spec for name, t in REGISTRY.items()}
        self.apps: tuple[str, ...] = tuple(APP_MODULES)
        self.task = DEFAULT_TASK
        self.state = SimState()
        self.gui = Gui(self.state)
        self._dispatch = {
            "tool_call": self._tool_call, "wait": self._wait,
            "click": self._click, "long_press": self._long_press, "input_text": self._input_text,
            "keyboard_enter": self._keyboard_enter, "scroll": self._scroll, "swipe": self._swipe,
            "navigate_back": self._navigate_back, "navigate_home": self._navigate_home,
            "open_app": self._open_app,
        }
        self.reset(DEFAULT_TASK)

    @classmethod
    def from_settings(cls, device_id: str = "sim-0", settings: SimSettings | None = None) -> SimPhone:
        """A phone configured from FLYWHEEL_SIM_* settings."""
        return cls(device_id, settings=settings or load_settings())

    # ---- Device protocol ---------------------------------------------------------------
    def reset(self, task: TaskInstance) -> Observation:
        """Default world + task.initial_state overlay; clock at task.start_clock_ms; faults reseeded."""
        self._set_state(initial_state_of(task, self.settings.world_seed))
        self.task = task
        self.faults.reseed(self.faults.seed if self.faults.seed is not None else task.seed)
        return self.observe()

    def observe(self) -> Observation:
        return self._observation(None, None)

    def act(self, action: Any) -> Observation:
        """Executes one action: advances the clock one step, maybe injects a fault, returns the view.

        Planner actions (memory, skills, delegation, answers) are not the phone's: they run in
        devices.harness.Harness, which wraps this phone; sent here they are refused unrun.
        """
        state = self.state
        if action.action_type not in self._dispatch:
            return self._observation(tool_error(
                action.action_type, "unsupported",
                f"{action.action_type} is a harness action; run the phone inside "
                "devices.harness.Harness to use it."), None)
        if state.done:
            return self._observation(
                tool_error(action.action_type, "conflict", "The episode has ended; reset the phone to start another."),
                None)
        state.step += 1
        state.clock_ms += self.settings.step_ms
        kind = action.action_type
        fault = None
        if kind not in _NO_FAULT:
            fault = self.faults.draw(TOOL_FAULTS if kind == "tool_call" else GUI_FAULTS)
        if fault is not None:
            state.record_fault(fault)
            early = self._pre_fault(fault, action)
            if early is not None:
                return early
        result, message = self._dispatch[kind](action)
        if fault == "slow_screen":
            state.clock_ms += SLOW_SCREEN_MS
            message = _join(message, "The screen was slow to respond.")
        elif fault == "permission_popup" and self.gui.foreground != "home":
            label = APP_LABELS[self.gui.foreground]
            self.gui.show_dialog(f"Allow {label} to access this device's storage?")
            message = _join(message, "A permission dialog appeared.")
        if not state.done and state.step >= state.max_steps:
            state.done = True
            message = _join(message, f"The step limit ({state.max_steps}) is reached.")
        return self._observation(result, message)

    def advance(self) -> int:
        """Spends one step (clock and step counter) with no effect on the phone and no fault:
        the harness calls it when it ran an action of its own. Returns the step."""
        return spend_step(self.state, self.settings.step_ms)

    def device_state(self, copy: bool = True) -> dict[str, Any]:
        """The phone's part of a final state (the same shape `SimState.to_final_json` gives
        the scorer's recomputed start): every app table by row id, settings, the clock.
        `copy=False` shares the rows with the live state (`shares_device_state`): for a
        scorer that reads them before the next action, never for a kept final state."""
        return self.state.device_json(copy)

    def snapshot(self) -> PhoneSnapshot:
        return PhoneSnapshot(self.state.freeze(), self.faults.getstate(), self.task.task_id)

    def restore(self, snapshot: PhoneSnapshot) -> None:
        self._set_state(SimState.thaw(snapshot.state))
        self.faults.setstate(snapshot.fault_state)

    def fork(self) -> SimPhone:
        snap = self.snapshot()
        twin = SimPhone.__new__(SimPhone)
        twin.__init_from(self, snap)
        return twin

    def close(self) -> None:
        self.state.done = True

    # ---- public helpers ------------------------------------------------------------------
    def call_tool(self, name: str, arguments: dict[str, Any] | None = None, *, agent: str = "main",
                  parent: str | None = None) -> ToolResult:
        """Runs one tool (no clock step, no fault) and logs it; the building block of tool_call."""
        arguments = arguments or {}
        registered = REGISTRY.get(name)
        if registered is None:
            result = tool_error(name, "unknown_tool",
                            f"There is no tool '{name}'; see the tool list for valid names.")
        else:
            try:
                result = tool_ok(name, registered.handler(self.state, registered.check(arguments)))
            except ToolFailure as exc:
                result = tool_error(name, exc.code, exc.message)
            except (KeyError, TypeError, ValueError) as exc:
                logger.warning("tool %s failed on inconsistent data: %r", name, exc)
                result = tool_error(name, "conflict", f"Tool '{name}' met inconsistent data ({exc}).")
        self.state.append_log(LogEntry(self.state.step, "tool_call", name, arguments, result.ok,
                                       agent, parent))
        return result

    @property
    def foreground_app(self) -> str:
        return self.gui.foreground

    def screen(self) -> list[Any]:
        """The current UI elements (rendered on demand, cached until something changes)."""
        return list(self.gui.screen().elements)

    # ---- internals -----------------------------------------------------------------------
    def __init_from(self, parent: SimPhone, snap: PhoneSnapshot) -> None:
        self.device_id = f"{parent.device_id}-fork{next(_FORKS)}"
        self.settings = parent.settings
        self.faults = FaultInjector(parent.faults.rate, parent.faults.seed)
        self.faults.setstate(snap.fault_state)
        self.tools = parent.tools
        self.apps = parent.apps
        self.task = parent.task
        self.state = SimState.thaw(snap.state)
        self.gui = Gui(self.state)
        self._dispatch = {k: getattr(self, v.__name__) for k, v in parent._dispatch.items()}

    def _set_state(self, state: SimState) -> None:
        self.state = state
        self.gui = Gui(state)

    def _observation(self, result: ToolResult | None, message: str | None) -> Observation:
        state = self.state
        return Observation.model_construct(
            step=state.step, clock_ms=state.clock_ms, foreground_app=self.gui.foreground,
            screen=list(self.gui.screen().elements), screenshot=None, result=result,
            message=message, done=state.done)

    def _pre_fault(self, fault: str, action: Any) -> Observation | None:
        """Faults that replace the action's effect; returns the observation, or None to go on."""
        state = self.state
        name = getattr(action, "name", action.action_type)
        if fault == "tool_timeout":
            state.clock_ms += TOOL_TIMEOUT_MS
            state.append_log(LogEntry(state.step, "tool_call", name, dict(action.arguments), False))
            return self._observation(tool_error(name, "timeout", f"Tool '{name}' timed out; try again.", True),
                                     None)
        if fault == "transient_error":
            state.append_log(LogEntry(state.step, "tool_call", name, dict(action.arguments), False))
            return self._observation(
                tool_error(name, "transient", f"Tool '{name}' hit a temporary error; try again.", True), None)
        if fault == "app_crash" and self.gui.foreground != "home" and action.action_type != "open_app":
            label = APP_LABELS[self.gui.foreground]
            self.gui.go_home()
            state.ui["dialog"] = None
            state.append_log(LogEntry(state.step, "gui", action.action_type, _gui_args(action), False))
            return self._observation(
                tool_error(action.action_type, "app_crashed", f"{label} has stopped; open it again.", True),
                f"{label} has stopped.")
        return None

    # ---- tool calls ---------------------------------------------------------------------------
    def _tool_call(self, action: Any) -> tuple[ToolResult, str | None]:
        return self.call_tool(action.name, dict(action.arguments)), None

    # ---- GUI actions -----------------------------------------------------------------------
    def _gui(self, action: Any, run: Any) -> tuple[ToolResult | None, str | None]:
        state = self.state
        try:
            message = run()
        except GuiError as exc:
            state.append_log(LogEntry(state.step, "gui", action.action_type, _gui_args(action), False))
            return tool_error(action.action_type, "bad_arguments", str(exc)), str(exc)
        state.append_log(LogEntry(state.step, "gui", action.action_type, _gui_args(action), True))
        return None, message

    def _wait(self, action: Any) -> tuple[ToolResult | None, str | None]:
        self.state.clock_ms += int(action.seconds * 1000)
        return self._gui(action, lambda: None)

    def _click(self, action: Any) -> tuple[ToolResult | None, str | None]:
        return self._gui(action, lambda: self.gui.click(action.index, action.x, action.y))

    def _long_press(self, action: Any) -> tuple[ToolResult | None, str | None]:
        return self._gui(action, lambda: self.gui.long_press(action.index, action.x, action.y))

    def _input_text(self, action: Any) -> tuple[ToolResult | None, str | None]:
        return self._gui(action, lambda: self.gui.input_text(action.text, action.index, action.clear))

    def _keyboard_enter(self, action: Any) -> tuple[ToolResult | None, str | None]:
        return self._gui(action, self.gui.keyboard_enter)

    def _scroll(self, action: Any) -> tuple[ToolResult | None, str | None]:
        return self._gui(action, lambda: self.gui.scroll(action.direction))

    def _swipe(self, action: Any) -> tuple[ToolResult | None, str | None]:
        # A swipe moves content with the finger: swiping up reveals what is below.
        opposite = {"up": "down", "down": "up", "left": "right", "right": "left"}[action.direction]
        return self._gui(action, lambda: self.gui.scroll(opposite))

    def _navigate_back(self, action: Any) -> tuple[ToolResult | None, str | None]:
        return self._gui(action, self.gui.navigate_back)

    def _navigate_home(self, action: Any) -> tuple[ToolResult | None, str | None]:
        return self._gui(action, self.gui.go_home)

    def _open_app(self, action: Any) -> tuple[ToolResult | None, str | None]:
        def run() -> str:
            app = resolve_app(action.app_name)
            if app is None:
                raise GuiError(f"There is no app called '{action.app_name}'; apps: "
                               f"{', '.join(APP_LABELS.values())}.")
            return self.gui.launch(app)
        return self._gui(action, run)


def _gui_args(action: Any) -> dict[str, Any]:
    return action.model_dump(exclude={"action_type"}, exclude_none=True)


def _join(first: str | None, second: str | None) -> str | None:
    if not first:
        return second
    if not second:
        return first
    return f"{first} {second}"
