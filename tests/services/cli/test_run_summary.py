"""The run's five closing lines, and "improved" only when the interval says so."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from services.cli.run_summary import closing_lines, verdict


def _score(overall: float, low: float, high: float, split: str = "dev") -> SimpleNamespace:
    return SimpleNamespace(overall=overall, overall_ci=(low, high), split=split)


def _gen(overall: float, low: float, high: float, stage: str = "sft", test: SimpleNamespace | None = None
         ) -> SimpleNamespace:
    return SimpleNamespace(stage=stage, evaluation=_score(overall, low, high), held_out=test)


def test_improved_needs_the_interval_above_the_first_score() -> None:
    first = _gen(0.10, 0.0, 0.2).evaluation
    assert verdict(first, _gen(0.30, 0.15, 0.45).evaluation).startswith("improved")
    assert verdict(first, _gen(0.20, 0.05, 0.35).evaluation).startswith("no clear change")
    assert verdict(first, _gen(0.01, 0.0, 0.05).evaluation).startswith("worse")


def test_five_lines_say_what_ran_the_verdict_where_to_look_resume_and_review(tmp_path: Path) -> None:
    lines = closing_lines(data_dir=tmp_path, episodes=812, snapshot="snap-1", rows=501,
                          summaries=[_gen(0.0, 0.0, 0.0), _gen(0.0, 0.0, 0.0)], stopped=None,
                          base_model="tiny", gate_url="http://127.0.0.1:8080", waiting=139)
    assert len(lines) == 5
    assert lines[0] == "ran 812 episodes into snapshot snap-1 (501 rows), then trained 2 generation(s) of tiny"
    assert lines[1].startswith("model (last generation against the first generation): no clear change: "
                               "dev 0.000 → 0.000")
    assert str(tmp_path / "logs" / "run.log") in lines[2]
    assert lines[3].startswith("resume: run `flywheel run` again")
    assert lines[4] == "review: 139 item(s) wait at http://127.0.0.1:8080 (or `flywheel review`)"
    bare = closing_lines(data_dir=tmp_path, episodes=None, snapshot=None, rows=None, summaries=[],
                         stopped="SFT stopped at step 3 of 12", base_model=None, gate_url=None, waiting=None)
    assert "not trained in this run (SFT stopped at step 3 of 12)" in bare[1]


def test_a_run_that_scored_the_base_model_compares_against_it_on_dev_and_test(tmp_path: Path) -> None:
    base = _gen(0.0, 0.0, 0.0, stage="base", test=_score(0.0, 0.0, 0.0, "test"))
    trained = _gen(0.33, 0.22, 0.44, test=_score(0.02, 0.0, 0.06, "test"))
    lines = closing_lines(data_dir=tmp_path, episodes=240, snapshot="snap-2", rows=700, summaries=[base, trained],
                          stopped=None, base_model="smollm2", gate_url=None, waiting=None)
    assert lines[0].endswith("then trained 1 generation(s) of smollm2")  # the base model is not a generation trained
    assert lines[1] == ("model (last generation against the base): improved: dev 0.000 → 0.330 [95% CI 0.220, 0.440]; "
                        "held-out templates, no clear change: test 0.000 → 0.020 [95% CI 0.000, 0.060]")


def test_the_live_status_shows_the_gates_own_waiting_count(tmp_path: Path) -> None:
    from services.cli.loop_run import DataLoop

    loop = DataLoop("127.0.0.1:1", tmp_path, 10)
    loop.progress.requested.update({"r1", "r2"})
    assert "review queue 2" in loop.status()  # from the review events
    loop.review_waiting = lambda: 139
    assert "review queue 139" in loop.status()  # the gate's count, as its page says

    def broken() -> int:
        raise RuntimeError("gone")

    loop.review_waiting = broken
    assert "review queue 2" in loop.status()  # a failing count never breaks the status
