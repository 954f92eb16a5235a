"""`flywheel suite list|eval`: JSON output parses and carries families and the overall score."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from services.cli.main import app

runner = CliRunner()


def test_suite_list_json_counts_templates_by_family() -> None:
    result = runner.invoke(app, ["suite", "list", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["total"] >= 40 and set(data["counts"]) == {"tool", "memory", "skills", "subagent"}
    assert data["held_out"] / data["total"] >= 0.2


def test_suite_list_train_split_hides_held_out_templates() -> None:
    data = json.loads(runner.invoke(app, ["suite", "list", "--split", "train", "--json"]).output)
    assert data["held_out"] == 0 and data["total"] > 0


def test_suite_eval_json_has_families_and_overall() -> None:
    result = runner.invoke(app, ["suite", "eval", "--policy", "oracle", "--split", "dev",
                                 "--n", "1", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data["families"]) == {"tool", "memory", "skills", "subagent"}
    assert data["overall"] == 1.0 and data["policy"] == "oracle"


def test_suite_eval_table_ends_with_a_summary() -> None:
    result = runner.invoke(app, ["suite", "eval", "--policy", "noop", "--n", "1"])
    assert result.exit_code == 0, result.output
    assert "Summary" in result.output and "overall" in result.output


def test_bad_setting_is_one_sentence_not_a_traceback() -> None:
    result = runner.invoke(app, ["suite", "eval", "--policy", "noop"],
                           env={"FLYWHEEL_SUITE_N_PER_TEMPLATE": "zero"})
    assert result.exit_code == 2
    assert "FLYWHEEL_SUITE_N_PER_TEMPLATE" in result.output
    assert "Traceback" not in result.output


def test_unknown_policy_is_rejected() -> None:
    result = runner.invoke(app, ["suite", "eval", "--policy", "genius"])
    assert result.exit_code != 0


def test_suite_eval_draws_the_scores_as_a_png(tmp_path) -> None:
    chart = tmp_path / "charts" / "noop.png"
    result = CliRunner().invoke(app, ["suite", "eval", "--policy", "noop", "--split", "dev",
                                      "--n", "1", "--json", "--plot", str(chart)])
    assert result.exit_code == 0, result.output
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert chart.stat().st_size > 10_000  # two panels with bars and labels, not an empty canvas


def test_suite_stats_json_prints_what_the_issue_lists() -> None:
    result = runner.invoke(app, ["suite", "stats", "--json", "--n", "1"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    for key in ("templates", "apps", "tools", "tools_used_by_oracle", "per_family", "per_tier",
                "share_needing_mid_episode_values", "share_with_dependent_chains_2plus",
                "distinct_test_instances_min"):
        assert key in data, key
    assert set(data["per_family"]) == {"tool", "memory", "skills", "subagent"}
    assert set(data["per_tier"]) == {"easy", "medium", "hard"}
    assert all({"templates", "mean_oracle_actions"} <= set(v) for v in data["per_tier"].values())


def test_suite_eval_reports_tiers_separately() -> None:
    result = runner.invoke(app, ["suite", "eval", "--policy", "oracle", "--split", "test", "--n", "1", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["tiers"] == {"easy": 1.0, "hard": 1.0, "medium": 1.0}
    assert set(data["template_tiers"]) == set(data["template_scores"])
    assert all(v == 1.0 for v in data["template_progress"].values())
