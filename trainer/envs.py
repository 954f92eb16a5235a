"""GRPO environments: a SimPhone task behind the planner's actions, as TRL's `environment_factory` wants.

TRL 1.16 exposes an environment's public methods as tools, calls `reset(**row)` per rollout
(its return value is appended to the prompt) and `get_reward()` for an environment-owned
reward. Here every public method is one planner action; its result is the compact
observation the policy would see. The rollout's outcome (score, success, progress), its
tool calls and invalid calls stay on the instance for CARE.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from devices.harness.context import render_header, render_observation
from devices.protocol import DeviceError, TaskInstance
from schemas import actions as act
from trainer.outcome import Outcome, score_episode

__all__ = ["ACTION_NAMES", "PhoneEnvironment", "action_tools", "environment_factory", "task_row"]

logger = logging.getLogger(__name__)

ENDED = "The episode has ended; reply without an action."


class PhoneEnvironment:
    """One SimPhone episode (inside the harness) per `reset`; the public methods are the planner's actions."""

    def __init__(self, phone_factory: Callable[[], Any] | None = None, spec: Any = None) -> None:
        if phone_factory is None:
            from devices.sim import SimPhone
            phone_factory = SimPhone
        self._phone_factory = phone_factory
        self._spec = spec
        self._phone: Any = None
        self.task: TaskInstance | None = None
        self.actions = 0
        self.invalid = 0
        self.outcome: Outcome | None = None
        self.done = False

    # -- TRL's hooks -------------------------------------------------------------------------------
    def reset(self, task: str = "", **_: Any) -> str:
        """Loads the task (a TaskInstance as JSON, from the dataset row) and returns the context."""
        if self._phone is None:
            from devices.harness import Harness

            self._phone = Harness(self._phone_factory(), self._spec)
        self.task = TaskInstance.model_validate_json(task)
        observation = self._phone.reset(self.task)
        self.actions = self.invalid = 0
        self.outcome = None
        self.done = False
        return render_header(self.task.goal, self._phone.catalogue(), observation)

    def get_reward(self) -> float:
        """s_i, the checker's success on the phone's state (CARE shapes it afterwards)."""
        return self.scored.success

    @property
    def scored(self) -> Outcome:
        """The checker's outcome on the phone's current state (cached until the next action)."""
        if self.task is None:
            raise RuntimeError("get_reward before reset")
        if self.outcome is None:
            self.outcome = score_episode(self.task, self._phone)
        return self.outcome

    def _act(self, build: Callable[[], Any]) -> str:
        if self.done:
            return ENDED
        try:
            action = build()
        except ValidationError as exc:
            self.invalid += 1
            return f"error bad_action: {str(exc).splitlines()[0][:200]}"
        self.actions += 1
        try:
            observation = self._phone.act(action)
        except DeviceError as exc:
            self.done = True
            return f"error device: {exc}"
        self.done = observation.done
        self.outcome = None
        return render_observation(observation)

    # -- the planner's actions (TRL turns each into a tool) ----------------------------------------
    def tool_call(self, name: str, arguments: dict) -> str:
        """Call one of the task's phone tools.

        Args:
            name: The tool's name, e.g. contacts.search.
            arguments: The tool's arguments as a JSON object.
        """
        return self._act(lambda: act.ToolCall(name=name, arguments=arguments or {}))

    def memory_read(self, key: str | None = None, query: str | None = None) -> str:
        """Read long-term memory by exact key, or search it.

        Args:
            key: The exact key to read.
            query: Words to search memory for.
        """
        return self._act(lambda: act.MemoryRead(key=key, query=query))

    def memory_write(self, key: str, value: str) -> str:
        """Store a value in long-term memory.

        Args:
            key: The memory key.
            value: The value to store.
        """
        return self._act(lambda: act.MemoryWrite(key=key, value=value))

    def use_skill(self, skill: str, arguments: dict) -> str:
        """Run a skill from the skill library.

        Args:
            skill: The skill's name.
            arguments: The skill's arguments.
        """
        return self._act(lambda: act.UseSkill(skill=skill, arguments=arguments or {}))

    def delegate(self, agent: str, instruction: str, arguments: dict) -> str:
        """Hand work to a sub-agent.

        Args:
            agent: The sub-agent's name.
            instruction: What it should do.
            arguments: Its plan, {"tool_calls": [...]}.
        """
        return self._act(lambda: act.Delegate(agent=agent, instruction=instruction, arguments=arguments or {}))

    def ask_user(self, question: str) -> str:
        """Ask the user a question.

        Args:
            question: The question.
        """
        return self._act(lambda: act.AskUser(question=question))

    def answer(self, text: str) -> str:
        """Tell the user an answer.

        Args:
            text: The answer.
        """
        return self._act(lambda: act.Answer(text=text))

    def open_app(self, app_name: str) -> str:
        """Open an app's screen.

        Args:
            app_name: The app.
        """
        return self._act(lambda: act.OpenApp(app_name=app_name))

    def click(self, index: int) -> str:
        """Tap a screen element.

        Args:
            index: The element's index.
        """
        return self._act(lambda: act.Click(index=index))

    def input_text(self, text: str, index: int | None = None) -> str:
        """Type text into a field.

        Args:
            text: The text.
            index: The field's index (default: the focused one).
        """
        return self._act(lambda: act.InputText(text=text, index=index))

    def navigate_back(self) -> str:
        """Go back one screen."""
        return self._act(act.NavigateBack)

    def finish(self, answer: str | None = None) -> str:
        """End the task, optionally with a final answer.

        Args:
            answer: The final answer, if the task asked a question.
        """
        return self._act(lambda: act.Finish(answer=answer))


ACTION_NAMES: tuple[str, ...] = tuple(
    name for name, member in vars(PhoneEnvironment).items()
    if callable(member) and not name.startswith("_") and name not in ("reset", "get_reward"))


def action_tools() -> list[dict[str, Any]]:
    """The action methods as JSON tool schemas, the same list TRL renders into GRPO prompts."""
    from transformers.utils import get_json_schema

    probe = PhoneEnvironment(phone_factory=lambda: None)
    return [get_json_schema(getattr(probe, name)) for name in ACTION_NAMES]


def environment_factory() -> PhoneEnvironment:
    """What GRPOTrainer(environment_factory=...) calls: one fresh SimPhone environment."""
    return PhoneEnvironment()


def task_row(task: TaskInstance) -> dict[str, Any]:
    """A GRPO dataset row for `task`: an empty user turn (reset fills it) and the task as JSON."""
    return {"prompt": [{"role": "user", "content": ""}], "task": task.model_dump_json(),
            "template": task.template, "family": task.family}

