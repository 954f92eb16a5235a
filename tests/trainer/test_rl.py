"""GRPO+CARE on the tiny model: multi-turn SimPhone rollouts, and CARE's advantages are the ones the loss uses."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from devices.harness.answer import format_action
from devices.suite.instances import generate_split
from schemas.actions import ToolCall
from tests.trainer.conftest import tool_call_bias
from trainer.care import CareConfig, care_group
from trainer.envs import PhoneEnvironment
from trainer.models import load_model
from trainer.outcome import Outcome
from trainer.rl import RlConfig, care_trainer_class, run_grpo

G = 4


def _tasks(name: str = "star_relation") -> list:
    return [t for t in generate_split("train", 2, 0) if t.template == name]


def _search_bias(model_dir: Path) -> dict:
    call = format_action(ToolCall(name="contacts.search", arguments={"query": "Sofia"}))
    return tool_call_bias(load_model(model_dir).tokenizer, call)


def test_grpo_runs_multi_turn_simphone_episodes(tiny_model: Path, tmp_path: Path) -> None:
    config = RlConfig(num_generations=G, tasks_per_step=2, max_steps=1, max_completion_length=320,
                      max_tool_calls=2, generation_kwargs={"sequence_bias": _search_bias(tiny_model)})
    result = run_grpo(tiny_model, _tasks(), tmp_path / "rl", config)
    assert result.steps == 1 and len(result.groups) == 2
    for group in result.groups:
        assert group.tool_calls == (2,) * G  # two turns each: call, tool reply, call again
        assert all(t > 0 for t in group.output_tokens)
        assert group.success == (0.0,) * G  # searching never answers: the checker says so
    meta = (result.checkpoint_dir / "flywheel_checkpoint.json").read_text()
    assert '"stage": "rl"' in meta and '"regime_counts"' in meta


# Scripted checker outcomes per rollout of a group, one pattern per step: efficiency, progress, learning.
PATTERNS = [
    [Outcome(1.0, 1.0, 1.0)] * G,
    [Outcome(0.0, 0.0, 0.0), Outcome(0.5, 0.0, 0.5), Outcome(0.5, 0.0, 0.5), Outcome(0.9, 0.0, 0.9)],
    [Outcome(1.0, 1.0, 1.0), Outcome(0.0, 0.0, 0.2), Outcome(1.0, 1.0, 1.0), Outcome(0.0, 0.0, 0.9)],
]


class ScriptedOutcomeEnvironment(PhoneEnvironment):
    """A real SimPhone environment whose checker outcome is scripted, so each CARE regime shows up."""

    resets = itertools.count()

    def reset(self, task: str = "", **kwargs) -> str:
        index = next(self.resets)
        self._scripted = PATTERNS[(index // G) % len(PATTERNS)][index % G]
        return super().reset(task, **kwargs)

    @property
    def scored(self) -> Outcome:
        return self._scripted


def test_care_advantages_are_the_ones_the_loss_uses(tiny_model: Path, tmp_path: Path) -> None:
    used: list[list[float]] = []
    base = care_trainer_class()

    class Recording(base):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            used.append(inputs["advantages"].tolist())
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

    config = RlConfig(num_generations=G, tasks_per_step=3, max_steps=1, max_completion_length=96,
                      max_tool_calls=1, adapt_thresholds=False,
                      generation_kwargs={"sequence_bias": _search_bias(tiny_model)})
    ScriptedOutcomeEnvironment.resets = itertools.count()
    result = run_grpo(tiny_model, _tasks(), tmp_path / "rl", config, trainer_class=Recording,
                      environment_factory=ScriptedOutcomeEnvironment)
    assert [g.regime for g in result.groups] == ["efficiency", "progress", "learning"]
    assert result.regime_counts == {"efficiency": 1, "progress": 1, "learning": 1}
    cfg = CareConfig()
    expected = [a for g in result.groups
                for a in care_group(g.success, g.progress, g.efficiency, cfg).advantages]
    [advantages] = used  # one optimiser step over the three groups
    assert sorted(advantages) == pytest.approx(sorted(expected), abs=1e-5)  # TRL shuffles the batch
    efficiency, progress, _ = result.groups
    # TRL's own advantages (success only, std-normalised) are all zero for both of these groups:
    assert efficiency.trl_advantages == pytest.approx((0.0,) * G)
    assert progress.trl_advantages == pytest.approx((0.0,) * G)
    assert max(abs(a) for a in progress.advantages) > 0.5  # CARE's progress term gives the failing group a signal
    assert efficiency.rewards == pytest.approx([1 - 0.2 * e for e in efficiency.efficiency])  # cost is charged
    assert all(e > 0 for e in efficiency.efficiency)


def test_plain_grpo_mode_normalises_success_per_group(tiny_model: Path, tmp_path: Path) -> None:
    config = RlConfig(num_generations=G, tasks_per_step=3, max_steps=1, max_completion_length=96, max_tool_calls=1,
                      care=False, generation_kwargs={"sequence_bias": _search_bias(tiny_model)})
    ScriptedOutcomeEnvironment.resets = itertools.count()
    result = run_grpo(tiny_model, _tasks(), tmp_path / "rl", config, environment_factory=ScriptedOutcomeEnvironment)
    assert {g.regime for g in result.groups} == {"grpo"}
    progress_group = result.groups[1]
    assert progress_group.rewards == (0.0,) * G  # no progress term: no signal at all
    assert result.groups[0].advantages == pytest.approx((0.0,) * G)  # no efficiency penalty either
    learning = result.groups[2]
    assert learning.advantages == pytest.approx([1.0, -1.0, 1.0, -1.0], abs=1e-3)


def test_a_time_limit_ends_grpo_after_the_step_that_passes_it(tiny_model: Path, tmp_path: Path) -> None:
    config = RlConfig(num_generations=G, tasks_per_step=1, max_steps=3, max_completion_length=32, max_tool_calls=1,
                      max_seconds=0.0)
    result = run_grpo(tiny_model, _tasks(), tmp_path / "rl", config)
    assert result.steps == 1  # without the limit: 3
    assert (tmp_path / "rl" / "flywheel_checkpoint.json").is_file()


def test_gradient_checkpointing_reaches_the_grpo_trainer(tiny_model: Path, tmp_path: Path) -> None:
    import torch

    for on in (True, False):
        config = RlConfig(num_generations=G, tasks_per_step=1, max_steps=1, max_completion_length=32,
                          max_tool_calls=1, gradient_checkpointing=on)
        result = run_grpo(tiny_model, _tasks(), tmp_path / f"rl-{on}", config)
        assert result.steps == 1
        args = torch.load(tmp_path / f"rl-{on}" / "training_args.bin", weights_only=False)
        assert args.gradient_checkpointing is on


def test_zero_variance_is_equal_rewards_only() -> None:
    from trainer.rl import zero_variance

    assert zero_variance([0.0, 0.0, 0.0]) and zero_variance([0.7] * 4)
    assert not zero_variance([0.0, 0.0, 0.0, 1.0]) and not zero_variance([0.1, 0.1000001])


def test_groups_without_reward_variance_are_dropped_and_never_trained_on(tiny_model: Path, tmp_path: Path) -> None:
    from safetensors.torch import load_file

    masks: list[list[int]] = []
    base = care_trainer_class()

    class Recording(base):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            masks.append(inputs["completion_mask"].sum(dim=1).tolist())
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

    # every rollout searches and never answers: success 0 and no progress in every group
    config = RlConfig(num_generations=G, tasks_per_step=2, max_steps=1, max_completion_length=96, max_tool_calls=1,
                      beta=0.04, generation_kwargs={"sequence_bias": _search_bias(tiny_model)})
    result = run_grpo(tiny_model, _tasks(), tmp_path / "rl", config, trainer_class=Recording)
    assert len(result.groups) == 2 and all(g.dropped for g in result.groups)
    assert masks and all(n == 0 for step in masks for n in step)  # no token of theirs reaches the loss
    assert result.metrics["dropped_groups"] == 2.0 == result.metrics["groups"]
    before = load_file(str(tiny_model / "model.safetensors"))
    after = load_file(str(result.checkpoint_dir / "model.safetensors"))
    assert all((before[k] == after[k]).all() for k in before)  # not even the KL term moved the model


def test_groups_with_variance_are_kept(tiny_model: Path, tmp_path: Path) -> None:
    from safetensors.torch import load_file

    config = RlConfig(num_generations=G, tasks_per_step=3, max_steps=1, max_completion_length=96,
                      max_tool_calls=1, adapt_thresholds=False,
                      generation_kwargs={"sequence_bias": _search_bias(tiny_model)})
    ScriptedOutcomeEnvironment.resets = itertools.count()
    result = run_grpo(tiny_model, _tasks(), tmp_path / "rl", config, environment_factory=ScriptedOutcomeEnvironment)
    _, progress, learning = result.groups
    assert not progress.dropped and not learning.dropped
    before = load_file(str(tiny_model / "model.safetensors"))
    after = load_file(str(result.checkpoint_dir / "model.safetensors"))
    assert any(not (before[k] == after[k]).all() for k in before)
