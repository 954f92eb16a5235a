"""The run's five closing lines, and "improved" only when the interval says so."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from services.cli.run_summary import closing_lines, verdict


def _gen(overall: float, low: float, high: float) -> SimpleNamespace:
    return SimpleNamespace(evaluation=SimpleNamespace(overall=overall, overall_ci=(low, high)))


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
    assert lines[1].startswith("model: no clear change: dev 0.000 → 0.000")
    assert str(tmp_path / "logs" / "run.log") in lines[2]
    assert lines[3].startswith("resume: run `flywheel run` again")
    assert lines[4] == "review: 139 item(s) wait at http://127.0.0.1:8080 (or `flywheel review`)"
    bare = closing_lines(data_dir=tmp_path, episodes=None, snapshot=None, rows=None, summaries=[],
                         stopped="SFT stopped at step 3 of 12", base_model=None, gate_url=None, waiting=None)
    assert "not trained in this run (SFT stopped at step 3 of 12)" in bare[1]


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
