"""Reference policies on every template: the oracle solves all, do-nothing, claims and random don't."""

from __future__ import annotations

from statistics import fmean

import pytest

from devices.harness.harness import Harness
from devices.sim import SimPhone
from devices.suite.episode import run_episode, score_state
from devices.suite.evaluate import evaluate
from devices.suite.instances import generate_split
from devices.suite.policies import ClaimPolicy, NoopPolicy, OraclePolicy, RandomPolicy

SPLITS = ("train", "dev", "test")


@pytest.fixture(scope="module")
def phone() -> Harness:
    return Harness(SimPhone())


@pytest.mark.parametrize("seed", [0, 7])  # the public default seed and the one reports quote beside it
@pytest.mark.parametrize("split", SPLITS)
def test_oracle_scores_one_on_every_instance(phone: Harness, split: str, seed: int) -> None:
    failures = {}
    for task in generate_split(split, 2, suite_seed=seed):
        result = run_episode(phone, task, OraclePolicy())
        if result.score != 1.0:
            failures[task.task_id] = result.score
        assert result.finished, task.task_id
    assert not failures


@pytest.mark.parametrize("split", SPLITS)
def test_initial_state_never_satisfies_a_checker(phone: Harness, split: str) -> None:
    for task in generate_split(split, 4, suite_seed=9):
        phone.reset(task)
        assert score_state(task, phone) == 0.0, task.task_id


@pytest.mark.parametrize("policy", [NoopPolicy, ClaimPolicy], ids=["noop", "claim"])
def test_do_nothing_and_claiming_agents_score_zero(phone: Harness, policy: type) -> None:
    for split in SPLITS:
        for task in generate_split(split, 2, suite_seed=1):
            result = run_episode(phone, task, policy())
            assert result.score == 0.0, (policy.__name__, task.task_id)


def test_claim_really_reaches_the_answer(phone: Harness) -> None:
    # Guards the test above: the claim must land in state.answer, or it proves nothing.
    task = generate_split("dev", 1, 0)[0]
    run_episode(phone, task, ClaimPolicy())
    assert "completed this task" in (phone.view().answer or "")


def test_random_agent_scores_near_zero_on_dev(phone: Harness) -> None:
    scores = [run_episode(phone, t, RandomPolicy(seed=3)).score
              for t in generate_split("dev", 2, suite_seed=2)]
    assert fmean(scores) < 0.05


def test_random_agent_acts_for_the_whole_episode(phone: Harness) -> None:
    task = generate_split("dev", 1, 0)[0]
    result = run_episode(phone, task, RandomPolicy(seed=1))
    kinds = {e.kind for e in phone.view().log}
    assert result.steps == task.max_steps
    assert {"tool_call", "gui"} <= kinds


def test_evaluate_reports_weighted_overall() -> None:
    report = evaluate("oracle", "dev", 1, 0, progress=False)
    assert report.overall == pytest.approx(1.0)
    assert set(report.template_scores) == set(report.template_families)
    noop = evaluate("noop", "dev", 1, 0, progress=False)
    assert noop.overall == 0.0 and noop.episodes == report.episodes
