"""The rollout engine: events of one episode, final state in the blob store, timeouts."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from devices.blobs import BlobStore
from devices.sim import SimPhone
from schemas.actions import Finish
from services.dataflow.tasks import ScriptedOracle
from services.rollout.engine import Rollout, episode_id_for
from services.rollout.policies import PolicyError, load_policy
from tests.services.dataflow.helpers import proposed, roll


def test_oracle_episode_names_policy_harness_and_stores_the_final_state(tmp_path: Path) -> None:
    task = proposed()
    started, ended = roll(task, tmp_path)
    from devices.harness.spec import HarnessSpec

    version = HarnessSpec.default().version
    assert started.episode_id == ended.episode_id == episode_id_for(task.task_id, "oracle",
                                                                    version)
    assert ended.policy == "oracle" and ended.harness == started.harness == version
    assert ended.outcome == "finished" and ended.steps
    assert all(step.latency_ms > 0 for step in ended.steps)
    assert ended.tool_calls == sum(s.tool_calls for s in ended.steps) >= 1
    final = json.loads(BlobStore(tmp_path).get(ended.final_state.sha256))
    assert set(final) >= {"tables", "settings", "memory", "log", "answer", "clock_ms"}
    assert ended.causation_id == started.event_id and started.causation_id == task.event_id


def test_rerunning_a_task_repeats_the_same_event_ids(tmp_path: Path) -> None:
    task = proposed(i=1)
    first, second = roll(task, tmp_path), roll(task, tmp_path)
    assert [e.event_id for e in first] == [e.event_id for e in second]


class StuckPolicy:
    name = "stuck"

    def begin(self, task, phone):  # type: ignore[no-untyped-def]
        return None

    def next_action(self, observation):  # type: ignore[no-untyped-def]
        time.sleep(3.0)
        return Finish()


class _SlowOracle(ScriptedOracle):
    """The oracle, whose every answer waits: a subclass of a bounded policy is not bounded."""

    def next_action(self, observation):  # type: ignore[no-untyped-def]
        time.sleep(3.0)
        return super().next_action(observation)


class _HangingSim(SimPhone):
    def act(self, action):  # type: ignore[no-untyped-def]
        time.sleep(3.0)
        return super().act(action)


@pytest.mark.parametrize(("device", "policy"), [(SimPhone, StuckPolicy), (SimPhone, _SlowOracle),
                                               (_HangingSim, ScriptedOracle)],
                         ids=["stuck policy", "slow oracle subclass", "hanging phone subclass"])
def test_a_stuck_call_ends_its_episode_as_timeout_instead_of_hanging(device, policy, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A policy or device call that waits ends the episode after the timeout. The SimPhone and
    the built-in oracle run without a timeout thread (their calls cannot block); a subclass may
    override a call with one that waits, so it gets the timeout again."""
    rollout = Rollout(device(), policy(), "oracle", BlobStore(tmp_path), call_timeout_s=0.2)
    began = time.monotonic()
    _, ended = rollout.run(proposed())
    rollout.close()
    assert time.monotonic() - began < 2.5
    assert ended.outcome == "timeout" and "longer than 0.2 s" in (ended.failure or "")
    assert ended.final_state is None


def test_the_sim_and_the_oracle_are_called_without_a_timeout_thread(tmp_path: Path) -> None:
    import threading

    seen = set()

    class _Noting(ScriptedOracle):
        bounded_calls = True  # declared by this class itself: bounded

        def next_action(self, observation):  # type: ignore[no-untyped-def]
            seen.add(threading.current_thread().name)
            return super().next_action(observation)

    rollout = Rollout(SimPhone(), _Noting(), "oracle", BlobStore(tmp_path))
    _, ended = rollout.run(proposed())
    rollout.close()
    assert ended.outcome == "finished" and seen == {threading.current_thread().name}


class BrokenPolicy:
    name = "broken"

    def begin(self, task, phone):  # type: ignore[no-untyped-def]
        return None

    def next_action(self, observation):  # type: ignore[no-untyped-def]
        raise KeyError("no such tool")


def test_a_policy_error_ends_the_episode_with_the_error(tmp_path: Path) -> None:
    rollout = Rollout(SimPhone(), BrokenPolicy(), "broken", BlobStore(tmp_path))
    _, ended = rollout.run(proposed())
    assert ended.outcome == "error" and "KeyError" in (ended.failure or "")


def test_policies_load_by_name_or_module_class() -> None:
    assert load_policy("oracle").name == "oracle"
    assert load_policy("devices.suite.policies:NoopPolicy").name == "noop"
    with pytest.raises(PolicyError, match="cannot load policy"):
        load_policy("devices.suite.policies:Nope")
    with pytest.raises(PolicyError, match="unknown policy"):
        load_policy("gpt")


class CountingPolicy:
    """A policy that reports its token counts the way trainer.policy.ModelPolicy does."""

    name = "counting"

    def __init__(self) -> None:
        from types import SimpleNamespace

        self.stats = SimpleNamespace(prompt_tokens=[], output_tokens=[])

    def begin(self, goal, catalogue):  # type: ignore[no-untyped-def]
        self.goal = goal

    def next_action(self, observation):  # type: ignore[no-untyped-def]
        self.stats.prompt_tokens.append(100 + observation.step)
        self.stats.output_tokens.append(7)
        return Finish()


def test_per_step_tokens_come_from_the_policy(tmp_path: Path) -> None:
    rollout = Rollout(SimPhone(), CountingPolicy(), "counting", BlobStore(tmp_path))
    _, ended = rollout.run(proposed())
    assert [(s.tokens.prompt, s.tokens.completion) for s in ended.steps] == [(100, 7)]
    assert ended.total_tokens.prompt == 100 and ended.total_tokens.completion == 7


def _rolled_with_slips(task, blobs: Path, share: float):  # type: ignore[no-untyped-def]
    from services.rollout.policies import SlippingOracle

    assert isinstance(load_policy("oracle", recovery=share), SlippingOracle)
    rollout = Rollout(SimPhone("test-sim"), load_policy("oracle", recovery=share), "oracle",
                      BlobStore(blobs))
    try:
        return rollout.run(task)[1]
    finally:
        rollout.close()


def test_a_slipping_oracle_records_one_refused_slip_as_no_target_and_still_passes(
        tmp_path: Path) -> None:
    """Share 1: every episode with a tool call plays one slip first; the phone refuses it, its
    step says target=False, the next step is the oracle's own action, and the verifier passes
    the episode as it passes the plain oracle's (the slip changed nothing)."""
    from devices.harness import Harness
    from services.verifier.decide import World, judge

    slipped = 0
    for template in range(12):
        task = proposed(i=3, template=template)
        plain = roll(task, tmp_path / "plain")[1]
        ended = _rolled_with_slips(task, tmp_path / "slip", 1.0)
        misses = [s for s in ended.steps if not s.target]
        if not any(s.action.action_type == "tool_call" for s in plain.steps):
            assert not misses
            continue
        slipped += 1
        assert len(misses) == 1, ended.steps
        miss = misses[0]
        assert miss.observation.result is not None and not miss.observation.result.ok
        # Without the slip, the steps are the plain oracle's, in order.
        kept = [s.action for s in ended.steps if s.target]
        assert kept == [s.action for s in plain.steps]
        world = World(BlobStore(tmp_path / "slip"), Harness(SimPhone("verifier")))
        verdict = judge(task, ended, world)[0]
        assert verdict.passed and verdict.score == 1.0, (task.template, verdict)
        # The same task slips the same way again (redelivery repeats the episode).
        again = _rolled_with_slips(task, tmp_path / "slip", 1.0)
        assert [s.action for s in again.steps] == [s.action for s in ended.steps]
    assert slipped >= 6


def test_a_share_of_zero_is_the_plain_oracle_and_every_step_is_a_target(tmp_path: Path) -> None:
    task = proposed(i=2)
    ended = roll(task, tmp_path)[1]
    assert type(load_policy("oracle")).__name__ == "ScriptedOracle"
    assert all(step.target for step in ended.steps)


class _HidesItsSteps(ScriptedOracle):
    """Not the slipping oracle, yet it claims every step is no target."""

    last_target = False


def test_only_the_slipping_oracle_can_mark_a_step_as_no_target(tmp_path: Path) -> None:
    rollout = Rollout(SimPhone("test-sim"), _HidesItsSteps(), "hider", BlobStore(tmp_path))
    try:
        ended = rollout.run(proposed(i=4))[1]
    finally:
        rollout.close()
    assert ended.steps and all(step.target for step in ended.steps)


def test_the_episode_records_the_screens_the_policy_saw_and_not_the_rest(tmp_path: Path) -> None:
    """A mixed episode (tool calls, then GUI steps): a tool step's screen is recorded only where
    the next step acts on the screen; every GUI step keeps the screen it left."""
    from devices.suite.registry import templates_for
    from schemas.episodes import SCREENLESS_ACTIONS

    names = [t.name for t in templates_for("train")]
    task = proposed(i=0, template=names.index("tick_off_reminder__and__bank_reference_gui"))
    _, ended = roll(task, tmp_path)
    assert ended.outcome == "finished"
    steps = ended.steps
    tool_steps = [(s, n) for s, n in zip(steps, steps[1:]) if s.observation.result is not None]
    assert any(n.action.action_type in SCREENLESS_ACTIONS for _, n in tool_steps)  # both kinds occur
    assert any(n.action.action_type not in SCREENLESS_ACTIONS for _, n in tool_steps)
    for step, following in tool_steps:
        shown_next = following.action.action_type not in SCREENLESS_ACTIONS
        assert bool(step.observation.screen) == shown_next, (step.index, following.action.action_type)
    assert all(s.observation.screen for s in steps if s.observation.result is None
               and s.action.action_type not in SCREENLESS_ACTIONS)  # what a GUI step left on screen
