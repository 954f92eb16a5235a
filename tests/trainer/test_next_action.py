"""Teacher-forced next-action accuracy on the tiny model: an answer counts only when it is the
oracle's exact action, and the oracle's step is what happens after each question."""

from __future__ import annotations

from pathlib import Path

from devices.harness import Harness
from devices.harness.answer import format_action
from devices.harness.episode import play
from devices.sim import SimPhone
from devices.suite.policies import OraclePolicy
from devices.suite.registry import get_template
from tests.trainer.conftest import tool_call_bias
from trainer.next_action import next_action_accuracy
from trainer.policy import load_policy


def _oracle_actions(task) -> list:
    return play(Harness(SimPhone()), task, OraclePolicy()).actions


def test_the_oracles_first_action_scores_one_of_the_episodes_steps(tiny_model: Path) -> None:
    task = get_template("star_relation").generate("dev", 0, 0)
    actions = _oracle_actions(task)
    assert len(actions) >= 2
    policy = load_policy(tiny_model, max_new_tokens=96)
    policy.model.generation_config.sequence_bias = tool_call_bias(policy.tokenizer, format_action(actions[0]))
    score = next_action_accuracy(policy, [task])
    assert score.steps == len(actions)  # every oracle step was asked, whatever the answers
    assert score.correct == 1 and score.by_action[actions[0].action_type][0] == 1
    assert 0 < score.accuracy < 1


def test_an_untrained_model_scores_nothing(tiny_model: Path) -> None:
    task = get_template("star_relation").generate("dev", 0, 0)
    score = next_action_accuracy(load_policy(tiny_model, max_new_tokens=32), [task])
    assert score.steps == len(_oracle_actions(task)) and score.correct == 0
    assert score.to_json_dict()["accuracy"] == 0.0


def test_a_greedy_model_is_asked_in_one_pass_that_says_what_decoding_would_write(tiny_model: Path) -> None:
    import torch

    task = get_template("star_relation").generate("dev", 0, 0)
    policy = load_policy(tiny_model, dtype="float32", max_new_tokens=12)
    assert policy.forced_checks
    harness = Harness(SimPhone())
    observation = harness.reset(task)
    policy.begin(task.goal, harness.catalogue())
    ids = policy.prompt_ids(policy.prompt_messages(observation))
    with torch.no_grad():
        greedy = policy.model.generate(torch.tensor([ids]), max_new_tokens=12, do_sample=False, eos_token_id=None,
                                       pad_token_id=policy.tokenizer.pad_token_id)[0, len(ids):].tolist()
    tokenizer = policy.tokenizer
    k = max(k for k in range(1, 13) if tokenizer(tokenizer.decode(greedy[:k]), add_special_tokens=False)["input_ids"]
            == greedy[:k])  # a prefix that reads back as the same tokens
    assert policy.writes_exactly(ids, tokenizer.decode(greedy[:k]))
    other = next(t for t in range(100, 2000) if t != greedy[k - 1] and tokenizer(
        tokenizer.decode(greedy[:k - 1] + [t]), add_special_tokens=False)["input_ids"] == greedy[:k - 1] + [t])
    assert not policy.writes_exactly(ids, tokenizer.decode(greedy[:k - 1] + [other]))
    assert policy.writes_exactly(ids, tokenizer.decode(greedy[:k]))  # the kept cache answers the same


def test_the_one_pass_check_counts_steps_but_no_invalid_answers(tiny_model: Path) -> None:
    task = get_template("star_relation").generate("dev", 0, 0)
    policy = load_policy(tiny_model, max_new_tokens=32)
    score = next_action_accuracy(policy, [task])
    assert score.steps == len(_oracle_actions(task)) and score.correct == 0
    assert score.invalid is None and policy.stats.output_tokens == []  # nothing was decoded


def test_an_empty_answer_is_refused_not_counted_as_written(tiny_model: Path) -> None:
    import pytest

    task = get_template("star_relation").generate("dev", 0, 0)
    policy = load_policy(tiny_model, max_new_tokens=8)
    harness = Harness(SimPhone())
    observation = harness.reset(task)
    policy.begin(task.goal, harness.catalogue())
    with pytest.raises(ValueError, match="at least one token"):
        policy.writes_exactly(policy.prompt_ids(policy.prompt_messages(observation)), "")
