"""The phase board `flywheel run`'s status line reads: a bar per phase, driven by the trainer's
steps (a real TRL run on the tiny model), the evaluation's episodes and the data phase's examples."""

from __future__ import annotations

from trainer.progress import PhaseBoard


def test_the_board_draws_a_bar_per_phase() -> None:
    board = PhaseBoard()
    assert board.line() == ""
    board.start("SFT", 40)
    board.update(10)
    assert board.line() == "phase: SFT ▕████░░░░░░░░░░░░▏ 10/40 steps"
    board.advance(30)
    assert board.line().endswith("▕████████████████▏ 40/40 steps")
    board.start("harness round", None, "suite runs scored")
    board.update(3)
    assert board.line() == "phase: harness round (3 suite runs scored)"
    board.clear()
    assert board.current is None


def test_the_data_phase_shows_examples_then_training_takes_over(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from types import SimpleNamespace

    from services.cli.run_cmd import phase_line
    from trainer import progress

    board = PhaseBoard()
    monkeypatch.setattr(progress, "PHASES", board)
    loop = SimpleNamespace(examples=500, progress=SimpleNamespace(examples=125, snapshots=[]))
    assert phase_line(loop) == "phase: data ▕████░░░░░░░░░░░░▏ 125/500 approved examples"  # type: ignore[arg-type]
    loop.progress.snapshots.append(object())
    assert phase_line(loop) == "phase: data done (snapshot written)"  # type: ignore[arg-type]
    board.start("GRPO", 8)
    board.update(2)
    assert phase_line(loop) == "phase: GRPO ▕████░░░░░░░░░░░░▏ 2/8 steps"  # type: ignore[arg-type]


def test_a_real_sft_run_reports_every_step(tiny_model, oracle_snapshot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from trainer.progress import PHASES
    from trainer.sft import SftConfig, run_sft

    PHASES.clear()
    run_sft(tiny_model, oracle_snapshot, tmp_path / "ckpt", SftConfig(max_steps=3, batch_size=2))
    phase = PHASES.current
    assert phase is not None and (phase.name, phase.done, phase.total) == ("SFT", 3, 3)
