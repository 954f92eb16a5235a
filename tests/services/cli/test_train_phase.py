"""The training phase of `flywheel run`: the loop config it trains with (per base model, with
`--train FIELD=VALUE`), and the harness it trains and scores in (the data dir's registry, with
or without harness rounds)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from devices.harness.spec import HarnessSpec, ToolPolicy
from services.cli.main import app
from services.cli.rounds_phase import HarnessRoundConfig
from services.cli.train_phase import TrainingPhase
from services.dataflow.evolution.delta import normalise
from services.dataflow.registry import HarnessRegistry
from trainer.loop import PRETRAINED_DEFAULTS, LoopConfig

runner = CliRunner()


def test_a_pretrained_base_model_gets_its_own_learning_rate_and_flags_override_it(tmp_path: Path) -> None:
    tiny = TrainingPhase("127.0.0.1:1", tmp_path, 2, "tiny")
    assert tiny.config == LoopConfig(generations=2)  # the tiny model keeps the class defaults
    smol = TrainingPhase("127.0.0.1:1", tmp_path, 3, "smollm2", train_overrides=["sft_steps=200", "eval-templates=0"])
    assert smol.config.sft_lr == PRETRAINED_DEFAULTS["sft_lr"] < LoopConfig().sft_lr / 10
    assert (smol.config.generations, smol.config.sft_steps, smol.config.eval_templates) == (3, 200, 0)
    # GRPO on a pretrained base recomputes activations (long prompts outgrew 24 GB on a CPU); a flag turns it off
    assert smol.config.rl_gradient_checkpointing and not tiny.config.rl_gradient_checkpointing
    off = TrainingPhase("127.0.0.1:1", tmp_path, 2, "smollm2", train_overrides=["rl_gradient_checkpointing=off"])
    assert off.config.rl_gradient_checkpointing is False


def test_the_harness_rounds_score_checkpoints_with_the_loops_batching_and_weights(tmp_path: Path) -> None:
    cpu = TrainingPhase("127.0.0.1:1", tmp_path, 3, "smollm2",
                        train_overrides=["eval_batch_size=1", "eval_dtype=bfloat16", "eval_max_steps=6"])
    rounds = cpu.rounds_config
    assert (rounds.batch_size, rounds.dtype, rounds.max_steps, rounds.max_new_tokens) == (1, "bfloat16", 6, 144)
    default = TrainingPhase("127.0.0.1:1", tmp_path, 2, "tiny").rounds_config
    assert (default.batch_size, default.dtype) == (LoopConfig().eval_batch_size, None)  # auto: the device's own


@pytest.mark.parametrize(("item", "names"), [
    ("sft_stepz=3", "sft_steps"),           # a typo: the message lists the real fields
    ("sft_steps=many", "sft_steps takes int"),
    ("num_generations=1", "num_generations must be at least 2"),
    ("rl_lr=0", "rl_lr must be above 0"),
    ("sft_lr=nan", "sft_lr must be above 0"),  # NaN compares false with every bound
    ("rl_lr=inf", "rl_lr must be above 0"),
    ("generations=5", "--train 'generations=5'"),  # that one is --generations
    ("eval_dtype=fp16", "eval_dtype must be one of auto, float32, bfloat16"),
    ("rl_gradient_checkpointing=maybe", "rl_gradient_checkpointing takes bool (true or false) values"),
    ("sft_steps", "FIELD=VALUE"),
])
def test_a_bad_train_flag_stops_the_run_at_start_up_naming_the_field(item: str, names: str, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLYWHEEL_DATA_DIR", str(tmp_path))
    result = runner.invoke(app, ["run", "--duration", "0", "--train", item])
    assert result.exit_code != 0
    assert names in result.output
    assert not (tmp_path / "archive").exists()  # stopped before the broker and the archive


@pytest.mark.integration
def test_without_harness_rounds_the_model_trains_and_is_scored_in_the_registry_harness(
        bootstrap: str, tmp_path: Path) -> None:
    """Rollouts read the data dir's registry; training and the dev evaluation must too, or a run
    with --no-harness-rounds scores its model in a harness its data never saw."""
    from trainer.data import build_oracle_snapshot
    from trainer.models import build_tiny

    default = HarnessSpec.default().to_json_dict()
    degraded = normalise({**default, "tools": ToolPolicy(hidden=("messages.send",)).model_dump()})
    version = HarnessRegistry.at_data_dir(tmp_path).init(degraded)
    assert version != HarnessSpec.default().version
    snapshot = build_oracle_snapshot(tmp_path / "snap", templates=["star_relation"], snapshot_id="snap-phase")
    phase = TrainingPhase(bootstrap, tmp_path, 1, str(build_tiny(tmp_path / "tiny")),
                          rounds=HarnessRoundConfig(enabled=False),
                          train_overrides=["sft_steps=1", "eval_templates=1", "eval_max_steps=1"])
    phase.train(snapshot)
    assert [s.evaluation.harness for s in phase.summaries] == [version]


def test_an_unreadable_registry_trains_in_the_built_in_harness_and_says_why(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    registry = HarnessRegistry.at_data_dir(tmp_path)
    registry.init(HarnessSpec.default().to_json_dict())
    registry.current_path.write_text("0123456789ab\n")  # names a version never stored
    phase = TrainingPhase("127.0.0.1:1", tmp_path, 1, "tiny", rounds=HarnessRoundConfig(enabled=False))
    assert phase._current_spec(registry) is None
    assert "0123456789ab" in caplog.text
    readable = HarnessRegistry.at_data_dir(tmp_path / "fine")
    readable.init(HarnessSpec.default().to_json_dict())
    assert phase._current_spec(readable)().version == HarnessSpec.default().version


def test_a_rerun_says_what_it_reuses_and_resumes(tmp_path: Path) -> None:
    from services.cli.train_phase import _resuming
    from trainer.sft import CHECKPOINT_FILE

    run_dir = tmp_path / "checkpoints" / "run-snap"
    assert _resuming(run_dir) is None  # nothing there: it starts afresh, silently
    (run_dir / "gen1").mkdir(parents=True)
    (run_dir / "gen1" / CHECKPOINT_FILE).write_text("{}")
    (run_dir / "gen2" / "trainer_state" / "checkpoint-3").mkdir(parents=True)
    said = _resuming(run_dir)
    assert said is not None and "reusing finished gen1" in said and "resuming gen2" in said
    assert "--fresh" in said
