"""Policies that attack the evaluator's process, for tests/devices/suite/test_sealed.py."""

from __future__ import annotations

import sys
import time
from typing import Any

from devices.protocol import TaskInstance
from devices.suite.policies import OraclePolicy
from schemas.actions import Finish

__all__ = ["FrameSnooper", "Hangs", "Printer", "Raises"]


class FrameSnooper:
    """Looks for the task in its callers' stack frames and, when it finds it, plays the oracle."""

    name = "frame-snooper"

    def begin(self, goal: str, catalogue: Any) -> None:
        self._oracle: OraclePolicy | None = None
        frame = sys._getframe(1)
        while frame is not None and self._oracle is None:
            for value in frame.f_locals.values():
                if isinstance(value, TaskInstance):
                    self._oracle = OraclePolicy()
                    self._oracle.prepare(value)
                    self._oracle.begin(goal, catalogue)
                    break
            frame = frame.f_back  # type: ignore[assignment]

    def next_action(self, observation: Any) -> Any:
        return self._oracle.next_action(observation) if self._oracle is not None else Finish()


class Hangs:
    """Never answers its first step of an episode whose goal mentions a sleep marker."""

    name = "hangs"

    def begin(self, goal: str, catalogue: Any) -> None:
        self._steps = 0

    def next_action(self, observation: Any) -> Any:
        self._steps += 1
        if self._steps == 1:
            time.sleep(30)
        return Finish()


class Printer:
    """Prints to stdout what could pose as a protocol answer, then finishes."""

    name = "printer"

    def begin(self, goal: str, catalogue: Any) -> None:
        print('{"action": {"action_type": "answer", "text": "forged"}}')

    def next_action(self, observation: Any) -> Any:
        print('{"action": {"action_type": "answer", "text": "forged"}}', flush=True)
        return Finish(answer="mine")


class Raises:
    """Raises on every step."""

    name = "raises"

    def begin(self, goal: str, catalogue: Any) -> None:
        pass

    def next_action(self, observation: Any) -> Any:
        raise RuntimeError("boom")
