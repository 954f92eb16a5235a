"""Training stops between steps and resumes where it stopped: a stop set mid-SFT ends it at the
next step with a resumable checkpoint, a rerun continues from that step to the end, and a rerun
of a finished generation reuses its checkpoint instead of overwriting it."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from transformers import TrainerCallback

from trainer.loop import LoopConfig, run_generations
from trainer.sft import CHECKPOINT_FILE, SftConfig, run_sft
from trainer.stopping import TrainingStopped, resume_point

STEPS = 12


class _CtrlCAt(TrainerCallback):
    """Sets the run's stop event at step `at`, as Ctrl-C would from another thread."""

    def __init__(self, stop: threading.Event, at: int) -> None:
        self.stop, self.at, self.set_at = stop, at, 0.0

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step == self.at and not self.stop.is_set():
            threading.Thread(target=self.stop.set).start()
            time.sleep(0.05)
            self.set_at = time.monotonic()


class _FirstStep(TrainerCallback):
    """Records the first step a run executes."""

    def __init__(self) -> None:
        self.first: int | None = None

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.first is None:
            self.first = state.global_step


def test_a_stop_mid_sft_ends_it_at_the_next_step_and_a_rerun_resumes(
        tiny_model: Path, oracle_snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from trainer import sft

    stop = threading.Event()
    ctrl_c, first = _CtrlCAt(stop, at=3), _FirstStep()
    callbacks: list[Any] = [ctrl_c]
    original = sft.build_sft_trainer

    def with_callbacks(*args: Any, **kwargs: Any) -> Any:
        built = original(*args, **kwargs)
        for callback in callbacks:
            built[0].add_callback(callback)
        return built

    monkeypatch.setattr(sft, "build_sft_trainer", with_callbacks)
    config = SftConfig(max_steps=STEPS, batch_size=2, learning_rate=1e-3)
    out = tmp_path / "gen1"
    with pytest.raises(TrainingStopped, match=f"SFT stopped at step [34] of {STEPS}") as stopped:
        run_sft(tiny_model, oracle_snapshot, out, config, stop=stop)
    assert time.monotonic() - ctrl_c.set_at < 5.0  # stopped and saved within five seconds
    assert stopped.value.resume_from == resume_point(out) and stopped.value.resume_from is not None
    assert not (out / CHECKPOINT_FILE).exists()  # a half-done stage is not a checkpoint
    callbacks[:] = [first]
    result = run_sft(tiny_model, oracle_snapshot, out, config, stop=threading.Event())
    assert result.steps == STEPS and (out / CHECKPOINT_FILE).exists()
    assert first.first == stopped.value.step + 1  # it went on from the stop, not from step 1


def test_a_stop_before_a_generation_ends_the_run_at_once(tiny_model: Path, oracle_snapshot: Path,
                                                         tmp_path: Path) -> None:
    stop = threading.Event()
    stop.set()
    started = time.monotonic()
    with pytest.raises(TrainingStopped, match="before generation 1"):
        run_generations(tiny_model, oracle_snapshot, tmp_path, LoopConfig(generations=1, sft_steps=2), stop=stop)
    assert time.monotonic() - started < 5.0


def test_a_rerun_reuses_a_finished_generation_instead_of_overwriting_it(
        tiny_model: Path, oracle_snapshot: Path, tmp_path: Path) -> None:
    config = replace(LoopConfig(), generations=1, sft_steps=2, eval_templates=1, eval_n=1, eval_max_steps=2,
                     max_completion_length=24)
    first = run_generations(tiny_model, oracle_snapshot, tmp_path, config)
    written = (tmp_path / "gen1" / "model.safetensors").stat().st_mtime_ns
    again = run_generations(tiny_model, oracle_snapshot, tmp_path, config)
    assert (tmp_path / "gen1" / "model.safetensors").stat().st_mtime_ns == written
    assert again[0].checkpoint_id == first[0].checkpoint_id


def test_a_finished_stage_leaves_no_resume_point(tiny_model: Path, oracle_snapshot: Path, tmp_path: Path) -> None:
    run_sft(tiny_model, oracle_snapshot, tmp_path / "gen1", SftConfig(max_steps=2, batch_size=2), stop=threading.Event())
    assert resume_point(tmp_path / "gen1") is None
