"""CARE's three regimes, its advantage and the efficiency floor, pinned on hand-computed groups."""

from __future__ import annotations

import math

import pytest

from trainer.care import (
    CareConfig,
    CareController,
    care_group,
    care_rewards,
    efficiency_cost,
    regime_of,
)

CFG = CareConfig(p_low=0.25, p_high=0.9, lambda_prog=0.5, lambda_eff=0.2, eps=1e-4)


def _std(values: list[float]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def test_regime_boundaries_follow_p_low_and_p_high() -> None:
    assert regime_of(0.0, CFG) == "progress"
    assert regime_of(0.2499, CFG) == "progress"
    assert regime_of(0.25, CFG) == "learning"
    assert regime_of(0.8999, CFG) == "learning"
    assert regime_of(0.9, CFG) == "efficiency"
    assert regime_of(1.0, CFG) == "efficiency"


def test_progress_regime_adds_lambda_prog_times_progress() -> None:
    success, progress = [0, 0, 0, 0, 0, 0, 0, 1], [0.0, 0.5, 0.25, 1.0, 0.0, 0.0, 0.75, 1.0]
    regime, rewards = care_rewards(success, progress, [0.3] * 8, CFG)
    assert regime == "progress"
    assert rewards == pytest.approx([s + 0.5 * p for s, p in zip(success, progress, strict=True)])


def test_progress_regime_gives_signal_where_plain_success_has_none() -> None:
    result = care_group([0, 0, 0, 0], [0.0, 0.5, 0.5, 1.0], [0.1] * 4, CFG)
    rewards = [0.0, 0.25, 0.25, 0.5]
    mean = sum(rewards) / 4
    assert result.regime == "progress"
    assert result.advantages == pytest.approx([(r - mean) / (_std(rewards) + 1e-4) for r in rewards])
    assert result.advantages[3] > 0 > result.advantages[0]


def test_learning_regime_uses_success_only() -> None:
    success, progress, eff = [1, 0, 1, 0], [1.0, 0.9, 1.0, 0.1], [0.9, 0.0, 0.1, 0.5]
    result = care_group(success, progress, eff, CFG)
    assert result.regime == "learning"
    assert result.rewards == (1.0, 0.0, 1.0, 0.0)
    assert result.advantages == pytest.approx([0.5 / (0.5 + 1e-4), -0.5 / (0.5 + 1e-4)] * 2)


def test_efficiency_regime_penalises_cost_with_the_floor() -> None:
    success, eff = [1, 1, 1, 1], [0.1, 0.2, 0.3, 0.4]
    result = care_group(success, [1.0] * 4, eff, CFG)
    rewards = [1 - 0.2 * e for e in eff]
    mean = sum(rewards) / 4
    floor = math.sqrt(0.9 * 0.1)  # 0.3 ≫ σ_R ≈ 0.022
    assert result.regime == "efficiency"
    assert result.rewards == pytest.approx(rewards)
    assert result.advantages == pytest.approx([(r - mean) / (floor + 1e-4) for r in rewards])
    # Without the floor the same rewards would be blown up to unit variance.
    assert max(abs(a) for a in result.advantages) < 0.1
    assert result.advantages[0] > result.advantages[-1]


def test_efficiency_floor_is_not_applied_when_sigma_is_larger() -> None:
    success, eff = [1] * 9 + [0], [0.0] * 10  # s̄ = 0.9 → efficiency; σ_R = 0.3 = the floor exactly
    result = care_group(success, [0.0] * 10, eff, CFG)
    rewards = [1.0] * 9 + [0.0]
    sigma = _std(rewards)
    assert result.regime == "efficiency"
    assert result.advantages == pytest.approx([(r - 0.9) / (max(sigma, math.sqrt(0.09)) + 1e-4) for r in rewards])


def test_all_equal_group_has_zero_advantage() -> None:
    assert care_group([0, 0, 0], [0.0, 0.0, 0.0], [0.5] * 3, CFG).advantages == (0.0, 0.0, 0.0)


def test_bad_config_and_ragged_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="p_low < p_high"):
        CareConfig(p_low=0.9, p_high=0.5)
    with pytest.raises(ValueError, match="one success"):
        care_rewards([1, 0], [0.0], [0.0, 0.0], CFG)


def test_efficiency_cost_is_bounded_mean_of_token_and_call_shares() -> None:
    assert efficiency_cost(64, 2, max_tokens=128, max_tool_calls=4) == pytest.approx(0.5)
    assert efficiency_cost(10_000, 100, max_tokens=128, max_tool_calls=4) == 1.0
    assert efficiency_cost(0, 0, max_tokens=128, max_tool_calls=4) == 0.0


def test_controller_moves_thresholds_boundedly_and_keeps_them_apart() -> None:
    controller = CareController()
    always = care_group([1, 1, 1, 1], [1.0] * 4, [0.1] * 4, controller.config)
    for _ in range(40):
        config = controller.observe([always] * 4)
        assert 0.1 <= config.p_low <= 0.4 and 0.75 <= config.p_high <= 0.95
        assert config.p_high - config.p_low >= 0.3 - 1e-9
    assert config.p_high == pytest.approx(0.95)  # pushed up by a competent policy, capped
    assert controller.counts["efficiency"] == 160
    never = care_group([0, 0, 0, 0], [0.0] * 4, [0.1] * 4, controller.config)
    before = controller.config.p_high
    after = controller.observe([never] * 4).p_high
    assert before - after <= 0.05 + 1e-9  # one update moves at most max_step
