"""The reference policies: the oracle (scripted expert), a do-nothing agent, a claim-only agent
and a seeded random agent; and the policy protocol (the agent boundary, devices.harness.policy).

A policy sees what an agent on a phone sees: the goal text, the harness's catalogue and each
observation. It never receives the TaskInstance, its params, the initial state or the device.
The oracle is the one privileged exception: the evaluator calls `OraclePolicy.prepare(task)`
before `begin`, and the script may use the *intent* in params (which contact "my sister" is)
but reads every id and value it needs from observations.
"""

from __future__ import annotations

import logging
import random
import string
from collections.abc import Iterator
from typing import Any, Literal

from devices.harness.catalogue import Catalogue
from devices.harness.policy import (
    ClaimPolicy,
    Policy,
    PolicyLoadError,
    PrivilegedPolicy,
    load_policy,
)
from devices.protocol import TaskInstance
from devices.suite.registry import get_template
from schemas.actions import (
    Answer,
    AskUser,
    Click,
    Delegate,
    Finish,
    InputText,
    KeyboardEnter,
    LongPress,
    MemoryRead,
    MemoryWrite,
    NavigateBack,
    NavigateHome,
    OpenApp,
    Scroll,
    Swipe,
    ToolCall,
    UseSkill,
    Wait,
)
from schemas.observations import Observation

__all__ = [
    "POLICY_NAMES",
    "ClaimPolicy",
    "NoopPolicy",
    "OraclePolicy",
    "Policy",
    "PolicyLoadError",
    "PolicyName",
    "RandomPolicy",
    "ScriptOracle",
    "load_policy",
    "make_policy",
]

logger = logging.getLogger(__name__)

PolicyName = Literal["oracle", "random", "noop", "claim"]
POLICY_NAMES: tuple[str, ...] = ("oracle", "random", "noop", "claim")

# The SimPhone screen (AndroidWorld's Pixel resolution); random taps land inside it.
_SCREEN_W, _SCREEN_H = 1080, 2400
# Words a random agent types; a few are plausible app words so arguments look real.
_WORDS = ("hello", "test", "wifi", "inbox", "meeting", "alarm", "note", "cafe", "photo",
          "milk", "friday", "hi there", "ok", "work", "home", "lunch", "cable", "trip")
# Relative weights of the random agent's action kinds: tools dominate, as in a planner.
_RANDOM_KIND_WEIGHTS: dict[str, float] = {
    "tool_call": 6, "click": 3, "long_press": 0.5, "input_text": 1, "keyboard_enter": 0.5,
    "scroll": 0.5, "swipe": 0.3, "navigate_back": 0.5, "navigate_home": 0.3, "open_app": 1,
    "wait": 0.2, "memory_read": 0.7, "memory_write": 0.7, "use_skill": 1.5, "delegate": 1,
    "ask_user": 0.3, "answer": 0.5,
}


class ScriptOracle(PrivilegedPolicy):
    """What every oracle shares: privileged, `prepare(task)` before `begin`, which turns the task
    into a script of actions (`_new_script`) that reads observations through `_observe`; it
    finishes if the script runs out."""

    name = "oracle"

    def __init__(self) -> None:
        self._script: Iterator[Any] | None = None
        self._task: TaskInstance | None = None
        self._last: Observation | None = None

    def prepare(self, task: TaskInstance) -> None:
        """Called by the evaluator (only for the oracle) before `begin`."""
        self._task = task

    def begin(self, goal: str, catalogue: Catalogue) -> None:
        if self._task is None:
            raise RuntimeError("the oracle must be prepared with its task before begin()")
        script = self._new_script(self._task)
        self._last = None
        self._script = script
        self._task = None

    def _new_script(self, task: TaskInstance) -> Iterator[Any]:
        raise NotImplementedError

    def _observe(self) -> Observation:
        if self._last is None:
            raise RuntimeError("the oracle asked for an observation before the episode started")
        return self._last

    def next_action(self, observation: Observation) -> Any:
        self._last = observation
        try:
            return next(self._script)  # type: ignore[arg-type]  # None before begin(): TypeError, as ever
        except StopIteration:
            return Finish()


class OraclePolicy(ScriptOracle):
    """Runs the template's scripted expert; finishes if the script runs out.

    Privileged: `prepare(task)` gives it the template and the params' intent before `begin`.
    """

    #: In-process and bounded: a rollout calls it without a timeout thread.
    bounded_calls = True

    def _new_script(self, task: TaskInstance) -> Iterator[Any]:
        template = get_template(task.template)
        return iter(template.oracle(dict(task.params), self._observe))


class NoopPolicy:
    """The do-nothing agent: finishes at once, changing nothing."""

    #: In-process and bounded: a rollout calls it without a timeout thread.
    bounded_calls = True

    name = "noop"

    def begin(self, goal: str, catalogue: Catalogue) -> None:
        return None

    def next_action(self, observation: Observation) -> Any:
        return Finish()


class RandomPolicy:
    """Seeded random actions over the whole action space, never finishing on its own."""

    #: In-process and bounded: a rollout calls it without a timeout thread.
    bounded_calls = True

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self._seed = seed
        self._episode = 0
        self._rng = random.Random(seed)
        self._tools: dict[str, Any] = {}
        self._skills: dict[str, Any] = {}
        self._agents: dict[str, Any] = {}
        self._apps: list[str] = []

    def begin(self, goal: str, catalogue: Catalogue) -> None:
        self._episode += 1
        self._rng = random.Random(f"{self._seed}:{self._episode}:{goal}")
        self._tools = {t.name: t for t in catalogue.tools}
        self._apps = sorted({t.app for t in catalogue.tools})
        self._skills = {s.name: s for s in catalogue.skills}
        self._agents = {a.name: a for a in catalogue.subagents}

    def next_action(self, observation: Observation) -> Any:
        rng = self._rng
        kinds = list(_RANDOM_KIND_WEIGHTS)
        kind = rng.choices(kinds, weights=[_RANDOM_KIND_WEIGHTS[k] for k in kinds])[0]
        return getattr(self, f"_{kind}")(observation)

    # -- one builder per action kind ------------------------------------------------------
    def _tool_call(self, obs: Observation) -> Any:
        name = self._rng.choice(sorted(self._tools)) if self._tools else "unknown.tool"
        schema = getattr(self._tools.get(name), "parameters", {}) or {}
        return ToolCall(name=name, arguments=self._args(schema))

    def _target(self, obs: Observation) -> dict[str, int]:
        if obs.screen and self._rng.random() < 0.7:
            return {"index": self._rng.randrange(len(obs.screen))}
        return {"x": self._rng.randrange(_SCREEN_W), "y": self._rng.randrange(_SCREEN_H)}

    def _click(self, obs: Observation) -> Any:
        return Click(**self._target(obs))

    def _long_press(self, obs: Observation) -> Any:
        return LongPress(**self._target(obs))

    def _input_text(self, obs: Observation) -> Any:
        return InputText(text=self._word())

    def _keyboard_enter(self, obs: Observation) -> Any:
        return KeyboardEnter()

    def _scroll(self, obs: Observation) -> Any:
        return Scroll(direction=self._rng.choice(["up", "down", "left", "right"]))

    def _swipe(self, obs: Observation) -> Any:
        return Swipe(direction=self._rng.choice(["up", "down", "left", "right"]))

    def _navigate_back(self, obs: Observation) -> Any:
        return NavigateBack()

    def _navigate_home(self, obs: Observation) -> Any:
        return NavigateHome()

    def _open_app(self, obs: Observation) -> Any:
        return OpenApp(app_name=self._rng.choice(self._apps) if self._apps else "contacts")

    def _wait(self, obs: Observation) -> Any:
        return Wait(seconds=self._rng.choice([1.0, 2.0, 5.0]))

    def _memory_read(self, obs: Observation) -> Any:
        if self._rng.random() < 0.5:
            return MemoryRead(key=self._word())
        return MemoryRead(query=self._word())

    def _memory_write(self, obs: Observation) -> Any:
        return MemoryWrite(key=self._word(), value=self._word())

    def _use_skill(self, obs: Observation) -> Any:
        if not self._skills:
            return UseSkill(skill=self._word(), arguments={})
        name = self._rng.choice(sorted(self._skills))
        schema = getattr(self._skills[name], "parameters", {}) or {}
        return UseSkill(skill=name, arguments=self._args(schema))

    def _delegate(self, obs: Observation) -> Any:
        agent = self._rng.choice(sorted(self._agents)) if self._agents else self._word()
        plan = []
        for _ in range(self._rng.randint(1, 2)):
            call = self._tool_call(obs)
            plan.append({"name": call.name, "arguments": call.arguments})
        return Delegate(agent=agent, instruction=self._word(), arguments={"tool_calls": plan})

    def _ask_user(self, obs: Observation) -> Any:
        return AskUser(question=self._word())

    def _answer(self, obs: Observation) -> Any:
        return Answer(text=self._word())

    # -- random but schema-shaped arguments -----------------------------------------------
    def _word(self) -> str:
        if self._rng.random() < 0.8:
            return self._rng.choice(_WORDS)
        return "".join(self._rng.choices(string.ascii_lowercase, k=self._rng.randint(3, 8)))

    def _args(self, schema: dict[str, Any]) -> dict[str, Any]:
        props: dict[str, Any] = schema.get("properties", {}) or {}
        required = set(schema.get("required", []) or [])
        return {key: self._value(key, spec or {}) for key, spec in props.items()
                if key in required or self._rng.random() < 0.5}

    def _value(self, key: str, spec: dict[str, Any]) -> Any:
        rng = self._rng
        if spec.get("enum"):
            return rng.choice(list(spec["enum"]))
        kind = spec.get("type", "string")
        if isinstance(kind, list):
            kind = rng.choice([k for k in kind if k != "null"] or ["string"])
        if kind == "boolean":
            return rng.random() < 0.5
        if kind in ("integer", "number"):
            low = int(spec.get("minimum", 0))
            high = int(spec.get("maximum", max(low, 0) + 100))
            return rng.randint(low, max(low, high))
        if kind == "array":
            item = spec.get("items", {}) or {}
            return [self._value(key, item) for _ in range(rng.randint(0, 2))]
        if kind == "object":
            return {}
        if "time" in key:
            return f"{rng.randrange(24):02d}:{rng.randrange(60):02d}"
        if key in ("start", "end", "date"):
            return f"2026-01-{rng.randint(1, 28):02d}T{rng.randrange(24):02d}:00"
        return self._word()


def make_policy(name: str, seed: int = 0) -> Policy:
    """The policy called `name` (oracle, random, noop, claim) or given as MODULE:CLASS; the
    latter runs sealed off in a process of its own (devices.harness.sealed)."""
    if ":" in name:
        from devices.harness.sealed import SealedPolicy

        return SealedPolicy(name)
    if name == "oracle":
        return OraclePolicy()
    if name == "noop":
        return NoopPolicy()
    if name == "random":
        return RandomPolicy(seed)
    if name == "claim":
        return ClaimPolicy()
    raise PolicyLoadError(f"unknown policy {name!r}; choose one of {', '.join(POLICY_NAMES)} "
                          "or give MODULE:CLASS")
