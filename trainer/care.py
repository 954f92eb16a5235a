"""CARE: competence-aware reward and advantage for GRPO groups, and the bounded threshold controller.

Per group of G rollouts with success rate s̄:
  s̄ < p_low            progress regime:   R_i = s_i + λ_prog·progress_i
  p_low ≤ s̄ < p_high   learning regime:   R_i = s_i
  s̄ ≥ p_high           efficiency regime: R_i = s_i − λ_eff·e_i
Advantage A_i = (R_i − R̄)/(σ_R + ε); in the efficiency regime the denominator is
max(σ_R, √(p_high(1−p_high))) + ε, a floor that stops tiny efficiency differences between
successful rollouts from being blown up to unit-variance advantages.
σ_R is the population standard deviation of the group's rewards.
"""

from __future__ import annotations

import logging
import math
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "CareConfig",
    "CareController",
    "GroupResult",
    "Regime",
    "care_group",
    "care_rewards",
    "efficiency_cost",
    "regime_of",
]

logger = logging.getLogger(__name__)

Regime = Literal["progress", "learning", "efficiency"]
REGIMES: tuple[Regime, ...] = ("progress", "learning", "efficiency")


@dataclass(frozen=True)
class CareConfig:
    """CARE's constants; the defaults are the paper's thresholds."""

    p_low: float = 0.25
    p_high: float = 0.9
    lambda_prog: float = 0.5
    lambda_eff: float = 0.2
    eps: float = 1e-4  # the same ε TRL adds to its own std normalisation

    def __post_init__(self) -> None:
        if not 0.0 <= self.p_low < self.p_high <= 1.0:
            raise ValueError(f"CARE needs 0 ≤ p_low < p_high ≤ 1, got p_low={self.p_low}, "
                             f"p_high={self.p_high}")
        if self.lambda_prog < 0 or self.lambda_eff < 0 or self.eps <= 0:
            raise ValueError("CARE's λ_prog and λ_eff must be ≥ 0 and ε > 0")


@dataclass(frozen=True)
class GroupResult:
    """One group's CARE outcome: the regime, the shaped rewards and the advantages TRL must use."""

    regime: Regime
    success_rate: float
    rewards: tuple[float, ...]
    advantages: tuple[float, ...]


def efficiency_cost(output_tokens: int, tool_calls: int, *, max_tokens: int, max_tool_calls: int) -> float:
    """e_i in [0, 1]: the mean of the reasoning-token share of the budget and the tool-call share."""
    tokens = min(1.0, output_tokens / max(1, max_tokens))
    calls = min(1.0, tool_calls / max(1, max_tool_calls))
    return (tokens + calls) / 2.0


def regime_of(success_rate: float, config: CareConfig) -> Regime:
    if success_rate < config.p_low:
        return "progress"
    if success_rate < config.p_high:
        return "learning"
    return "efficiency"


def care_rewards(success: Sequence[float], progress: Sequence[float], efficiency: Sequence[float],
                 config: CareConfig) -> tuple[Regime, list[float]]:
    """The group's regime and its shaped rewards R_i."""
    if not (len(success) == len(progress) == len(efficiency)) or not success:
        raise ValueError("CARE needs one success, progress and efficiency value per rollout")
    rate = sum(success) / len(success)
    regime = regime_of(rate, config)
    if regime == "progress":
        rewards = [s + config.lambda_prog * p for s, p in zip(success, progress, strict=True)]
    elif regime == "learning":
        rewards = [float(s) for s in success]
    else:
        rewards = [s - config.lambda_eff * e for s, e in zip(success, efficiency, strict=True)]
    return regime, rewards


def care_group(success: Sequence[float], progress: Sequence[float], efficiency: Sequence[float],
               config: CareConfig) -> GroupResult:
    """Rewards and advantages for one group of G rollouts."""
    regime, rewards = care_rewards(success, progress, efficiency, config)
    mean = sum(rewards) / len(rewards)
    sigma = math.sqrt(sum((r - mean) ** 2 for r in rewards) / len(rewards))
    if regime == "efficiency":
        sigma = max(sigma, math.sqrt(config.p_high * (1.0 - config.p_high)))
    advantages = tuple((r - mean) / (sigma + config.eps) for r in rewards)
    return GroupResult(regime=regime, success_rate=sum(success) / len(success),
                       rewards=tuple(rewards), advantages=advantages)


@dataclass
class CareController:
    """Moves p_low/p_high with the recent success rates, within bounds and by a bounded step.

    The thresholds follow the 25th and 90th percentiles of the last `window` group success
    rates, half-way from the defaults, each update moving at most `max_step`, always within
    [low_bounds] / [high_bounds] and at least `min_gap` apart. So a policy that succeeds more
    reaches the efficiency regime later (and vice versa) but never leaves the sane range.
    """

    config: CareConfig = field(default_factory=CareConfig)
    window: int = 64
    max_step: float = 0.05
    low_bounds: tuple[float, float] = (0.1, 0.4)
    high_bounds: tuple[float, float] = (0.75, 0.95)
    min_gap: float = 0.3
    recent: deque[float] = field(default_factory=deque)
    counts: Counter[str] = field(default_factory=Counter)

    def observe(self, results: Sequence[GroupResult]) -> CareConfig:
        """Records one step's groups, logs the regime counts, and returns the updated config."""
        step_counts = Counter(r.regime for r in results)
        self.counts.update(step_counts)
        for result in results:
            self.recent.append(result.success_rate)
            while len(self.recent) > self.window:
                self.recent.popleft()
        logger.info("CARE regimes this step: %s", {k: step_counts.get(k, 0) for k in REGIMES})
        if len(self.recent) >= 4:
            ordered = sorted(self.recent)
            q25 = ordered[int(0.25 * (len(ordered) - 1))]
            q90 = ordered[int(0.9 * (len(ordered) - 1))]
            default = CareConfig()
            low = self._toward(self.config.p_low, (default.p_low + q25) / 2, self.low_bounds)
            high = self._toward(self.config.p_high, (default.p_high + q90) / 2, self.high_bounds)
            low = min(low, high - self.min_gap)
            self.config = CareConfig(p_low=low, p_high=high, lambda_prog=self.config.lambda_prog,
                                     lambda_eff=self.config.lambda_eff, eps=self.config.eps)
        return self.config

    def _toward(self, current: float, target: float, bounds: tuple[float, float]) -> float:
        step = max(-self.max_step, min(self.max_step, target - current))
        return max(bounds[0], min(bounds[1], current + step))
