"""The one episode loop, `devices.harness.episode.play`: who is handed the task, and that every
policy and device call goes through the caller's wrappers."""

from __future__ import annotations

from typing import Any

from devices.harness.episode import play
from devices.harness.policy import PrivilegedPolicy
from devices.protocol import DeviceError
from devices.sim import SimPhone
from devices.suite.instances import generate_split
from devices.suite.policies import OraclePolicy
from schemas.actions import Finish, ToolCall

TASK = next(iter(generate_split("train", 1, 0)))


class Curious:
    """An agent under test that offers a `prepare` hook, hoping to be handed the task."""

    name = "curious"

    def __init__(self) -> None:
        self.seen: Any = None

    def prepare(self, task: Any) -> None:
        self.seen = task

    def begin(self, goal: str, catalogue: Any) -> None:
        pass

    def next_action(self, observation: Any) -> Any:
        return Finish()


class Privileged(Curious, PrivilegedPolicy):
    name = "privileged"


def test_only_a_privileged_policy_is_handed_the_task() -> None:
    curious, privileged = Curious(), Privileged()
    play(SimPhone(), TASK, curious)
    play(SimPhone(), TASK, privileged)
    assert curious.seen is None
    assert privileged.seen is TASK


def test_every_policy_and_device_call_goes_through_the_wrappers() -> None:
    calls: list[tuple[str, str]] = []

    def through(kind: str) -> Any:
        def call(fn: Any, *args: Any) -> Any:
            calls.append((kind, fn.__name__))
            return fn(*args)
        return call

    played = play(SimPhone(), TASK, OraclePolicy(), call_policy=through("policy"),
                  call_device=through("device"))
    steps = len(played.actions)
    assert played.finished and steps > 0
    assert calls[:2] == [("device", "reset"), ("policy", "begin")]
    assert calls[2:] == [("policy", "next_action"), ("device", "act")] * steps


def test_a_device_error_while_acting_ends_the_episode_with_it() -> None:
    class Broken(SimPhone):
        def act(self, action: Any) -> Any:  # type: ignore[override]
            raise DeviceError("the phone stopped answering")

    class Caller:
        name = "caller"

        def begin(self, goal: str, catalogue: Any) -> None:
            pass

        def next_action(self, observation: Any) -> Any:
            return ToolCall(name="contacts.list", arguments={})

    played = play(Broken(), TASK, Caller())
    assert isinstance(played.error, DeviceError) and played.actions == [] and not played.finished
