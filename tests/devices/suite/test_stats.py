"""The suite's breadth and depth, as `flywheel suite stats` reports them, held to the issue's bars."""

from __future__ import annotations

from statistics import fmean

import pytest

from devices.sim import SimPhone
from devices.suite.registry import all_templates
from devices.suite.stats import oracle_run, suite_stats
from devices.suite.template import tier_for
from devices.suite.templates._world import WorldTemplate


@pytest.fixture(scope="module")
def stats() -> dict:
    return suite_stats(n_oracle=2, seed=0)


def test_breadth(stats: dict) -> None:
    assert stats["apps"] >= 13 and stats["tools"] >= 120
    assert stats["per_family"]["tool"]["templates"] >= 52
    assert stats["tools_used_by_oracle"] >= 70


def test_tool_tasks_need_plans(stats: dict) -> None:
    tool = stats["per_family"]["tool"]
    assert tool["mean_oracle_actions"] >= 3
    assert tool["needs_mid_episode_value"] >= 0.6
    assert tool["dependent_chain_2plus"] >= 0.25
    assert {"tool/easy", "tool/medium", "tool/hard"} <= set(stats["per_family_tier"])


def test_every_tool_template_has_twenty_distinct_test_instances() -> None:
    # Distinct = different (goal, params); the other families' counts are in `suite stats`.
    from devices.suite.stats import _distinct_test

    rebuilt = [t for t in all_templates() if t.family == "tool"]
    assert len(rebuilt) >= 52
    low = {t.name: n for t in rebuilt if (n := _distinct_test(t, 0, 20)) < 20}
    assert not low


def test_declared_tiers_match_the_oracle() -> None:
    phone = SimPhone()
    wrong = {}
    for template in (t for t in all_templates() if isinstance(t, WorldTemplate)):
        actions = fmean(oracle_run(phone, template, template.splits()[0], i, 1)[0] for i in range(3))
        if tier_for(actions, template.chain) != template.tier:
            wrong[template.name] = (template.tier, actions, template.chain)
    assert not wrong


def test_instances_carry_their_template_tier_and_apps() -> None:
    template = next(t for t in all_templates() if isinstance(t, WorldTemplate) and t.tier == "hard")
    task = template.generate("test", 0, 0)
    assert task.tier == "hard" and set(template.apps) < set(task.apps)


@pytest.mark.parametrize(("actions", "chain", "tier"), [(1, 0, "easy"), (2, 1, "easy"), (3, 1, "medium"),
                                                         (2, 2, "hard"), (4, 0, "hard"), (3, 0, "medium")])
def test_tier_rule(actions: float, chain: int, tier: str) -> None:
    assert tier_for(actions, chain) == tier


def test_stats_list_derived_values_and_context_size(stats: dict) -> None:
    assert "arithmetic" in stats["derived_values"]["transfer_half"]
    assert "star_relation" not in stats["derived_values"]
    assert stats["templates_with_derived_values"]["date arithmetic"] >= 10
    size = stats["prompt_chars_per_step"]
    assert {"all", "tool", "memory", "skills", "subagent"} <= set(size)
    assert 0 < size["all"]["median"] <= size["all"]["p90"]


def test_chains_and_errands_are_counted_apart(stats: dict) -> None:
    depth = stats["depth"]
    errands = sum("__and__" in t.name for t in all_templates())
    assert depth["errands"] == errands and depth["genuine_chains"] >= 40
    assert depth["genuine_chain_mean_oracle_actions"] > 0 and depth["errand_mean_oracle_actions"] > 0


def test_the_hard_tier_is_deep_through_genuine_chains(stats: dict) -> None:
    # Issue 20, item 5: depth from templates whose later calls take earlier results (the looping
    # chains of tool_chains*), not from errands or re-tiering; 41 genuine chains before them.
    depth = stats["depth"]
    chains = [t for t in all_templates() if t.__module__.startswith("devices.suite.templates.tool_chains")]
    assert len(chains) >= 19 and depth["genuine_chains"] >= 41 + len(chains)
    assert depth["hard_tier_mean_oracle_actions"] >= 8.0, depth
    assert depth["genuine_chain_mean_oracle_actions"] >= 8.0, depth
