"""`flywheel run` without --quick: easy-tier data, base vs trained, and an honest forecast up front."""

from __future__ import annotations

from services.cli.learning_run import (
    AIM_MINUTES,
    MEASURED_MINUTES,
    expected_minutes,
    learning_data_env,
    learning_forecast,
)
from trainer.loop import loop_config


def test_the_data_phase_draws_easy_canonical_tasks_unless_the_environment_says_otherwise() -> None:
    assert learning_data_env({}) == {"FLYWHEEL_GENERATOR_TIERS": "easy", "FLYWHEEL_GENERATOR_REPHRASE_EVERY": "0"}
    assert learning_data_env({"FLYWHEEL_GENERATOR_TIERS": "medium"}) == {"FLYWHEEL_GENERATOR_REPHRASE_EVERY": "0"}


def test_the_forecast_says_up_front_when_this_machine_is_too_slow_for_the_half_hour() -> None:
    config = loop_config("smollm2", learning=True)
    two = learning_forecast("smollm2", config, 700, cores=2, gpu=False, bf16=True)
    assert "700 easy-tier rows" in two and "40 dev and test episodes each" in two
    assert f"about {MEASURED_MINUTES:.0f} minutes on this machine's 2 CPU core(s)" in two  # as measured
    # the measured 2-core run is over the half hour, and the sentence says so before anything starts
    assert ("more than the 30 minutes aimed at" in two) == (MEASURED_MINUTES > AIM_MINUTES)
    eight = learning_forecast("smollm2", config, 700, cores=8, gpu=False, bf16=True)
    assert expected_minutes(8, False, True) <= AIM_MINUTES and "more than" not in eight
    one = learning_forecast("smollm2", config, 700, cores=1, gpu=False, bf16=True)
    assert expected_minutes(1, False, True) > AIM_MINUTES and f"more than the {AIM_MINUTES:.0f} minutes aimed at" in one
    assert "GPU" in learning_forecast("smollm2", config, 700, cores=1, gpu=True)
    assert expected_minutes(64, False, True) == expected_minutes(8, False, True)  # beyond 8 cores nothing is promised


def test_the_run_slips_in_a_share_of_its_oracle_episodes_unless_the_environment_says(monkeypatch) -> None:
    from services.cli.run_cmd import RUN_RECOVERY, _recovery_env

    monkeypatch.delenv("FLYWHEEL_ROLLOUT_RECOVERY", raising=False)
    assert _recovery_env() == {"FLYWHEEL_ROLLOUT_RECOVERY": str(RUN_RECOVERY)} and 0 < RUN_RECOVERY < 1
    monkeypatch.setenv("FLYWHEEL_ROLLOUT_RECOVERY", "0")
    assert _recovery_env() == {}  # the user's own share (here none) is left alone


def test_a_cpu_without_native_bf16_is_forecast_from_its_own_measured_run() -> None:
    config = loop_config("smollm2", learning=True)
    slow = learning_forecast("smollm2", config, 700, cores=2, gpu=False, bf16=False)
    assert expected_minutes(2, False, False) > expected_minutes(2, False, True)
    assert "more than the 30 minutes aimed at" in slow
