"""The sealed policy boundary: a `MODULE:CLASS` policy runs in its own process and sees only the
protocol's messages, so reading the task from the evaluator's stack gets it nothing; a policy
that hangs, prints or raises ends its own episode and the evaluation goes on."""

from __future__ import annotations

import time

import pytest

from devices.harness import Harness
from devices.harness.episode import play
from devices.harness.sealed import SealedPolicy
from devices.sim import SimPhone
from devices.suite.policies import load_policy, make_policy
from devices.suite.registry import get_template
from devices.suite.scoring import score_final_state
from schemas.actions import Finish

MODULE = "tests.devices.suite.sealed_policies"
TEMPLATE = "text_relation"


def _score(policy: object) -> float:
    task = get_template(TEMPLATE).generate("dev", 0, 0)
    played = play(Harness(SimPhone()), task, policy)  # type: ignore[arg-type]
    return score_final_state(task, played.harness.final_state()).score


def test_the_frame_snooper_wins_in_process_and_gets_nothing_sealed() -> None:
    assert _score(load_policy(f"{MODULE}:FrameSnooper")) == 1.0  # the attack works in process
    sealed = make_policy(f"{MODULE}:FrameSnooper")
    assert isinstance(sealed, SealedPolicy)
    try:
        assert _score(sealed) == 0.0
    finally:
        sealed.close()


def test_a_policy_that_hangs_ends_its_episode_and_the_next_one_runs() -> None:
    sealed = SealedPolicy(f"{MODULE}:Hangs", step_timeout_s=0.5)
    try:
        started = time.monotonic()
        assert _score(sealed) == 0.0
        assert time.monotonic() - started < 10 and sealed.timeouts == 1
        assert _score(sealed) == 0.0 and sealed.timeouts == 2  # a fresh process, timed again
    finally:
        sealed.close()


def test_prints_cannot_forge_an_answer() -> None:
    sealed = SealedPolicy(f"{MODULE}:Printer")
    try:
        task = get_template(TEMPLATE).generate("dev", 0, 0)
        played = play(Harness(SimPhone()), task, sealed)
        assert played.actions == [Finish(answer="mine")]
    finally:
        sealed.close()


def test_a_policy_that_raises_ends_its_episode() -> None:
    sealed = SealedPolicy(f"{MODULE}:Raises")
    try:
        assert _score(sealed) == 0.0 and sealed.failures == 1
        assert _score(sealed) == 0.0 and sealed.failures == 2
    finally:
        sealed.close()


def test_a_closed_policy_leaves_no_process() -> None:
    sealed = SealedPolicy(f"{MODULE}:Printer")
    process = sealed._process
    assert process is not None and process.poll() is None
    sealed.close()
    assert process.poll() is not None


def test_a_policy_that_cannot_load_is_one_sentence() -> None:
    from devices.suite.policies import PolicyLoadError

    with pytest.raises(PolicyLoadError, match="has no 'Nope'"):
        SealedPolicy(f"{MODULE}:Nope")
