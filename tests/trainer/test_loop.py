"""The training loop `flywheel run` calls: SFT then GRPO+CARE, each evaluated and fed back as events."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from devices.harness.spec import HarnessSpec
from schemas.registry import validate_event
from services.cli.main import app
from trainer.loop import LoopConfig, run_generations

SMALL = LoopConfig(generations=2, sft_steps=3, rl_steps=1, num_generations=2, max_completion_length=24,
                   max_tool_calls=1, eval_templates=2, eval_max_steps=2)


def test_two_generations_publish_checkpoints_groups_evals_and_feedback(tiny_model: Path, oracle_snapshot: Path,
                                                                       tmp_path: Path) -> None:
    events = []
    summaries = run_generations(tiny_model, oracle_snapshot, tmp_path, SMALL, run_id="run-t", on_event=events.append)
    assert [s.stage for s in summaries] == ["sft", "rl"]
    assert summaries[1].checkpoint_dir.parent == tmp_path
    types = [e.type for e in events]
    assert types.count("checkpoint.saved") == 2 and types.count("eval.reported") == 2
    assert types.count("training.feedback_issued") == 2 and types.count("rl.group_scored") == 1
    for event in events:  # every event survives the wire format
        assert validate_event(json.loads(event.model_dump_json())) == event
    sft_saved = events[0]
    assert sft_saved.stage == "sft" and sft_saved.snapshot_id == "snap-test" and sft_saved.correlation_id == "run-t"
    feedback = next(e for e in events if e.type == "training.feedback_issued")
    assert {s.scope for s in feedback.stats} == {"family", "template", "tier"}
    assert feedback.weak_templates  # an untrained tiny model fails, so every evaluated template is weak
    report = next(e for e in events if e.type == "eval.reported")
    assert report.intervals["overall"].low <= report.overall <= report.intervals["overall"].high
    assert {s.evaluation.harness for s in summaries} == {HarnessSpec.default().version}
    for s in summaries:  # the cheap progress signal, every generation: oracle steps of the first dev tasks
        assert s.next_action is not None and s.next_action["steps"] > 0
        assert 0 <= s.next_action["correct"] + (s.next_action["invalid"] or 0) <= s.next_action["steps"]


def test_each_generation_trains_and_is_evaluated_in_the_harness_current_then(tiny_model: Path,
                                                                            oracle_snapshot: Path,
                                                                            tmp_path: Path) -> None:
    default = HarnessSpec.default()
    promoted = default.model_copy(update={"playbook": ("Check the contact before texting.",), "parent": default.version})
    current = iter([default, promoted])  # a promotion lands between the two generations
    asked = []

    def harness() -> HarnessSpec:
        asked.append(next(current))
        return asked[-1]

    summaries = run_generations(tiny_model, oracle_snapshot, tmp_path, SMALL, harness=harness)
    assert len(asked) == 2 and promoted.version != default.version
    assert [s.evaluation.harness for s in summaries] == [default.version, promoted.version]


def test_each_loop_event_goes_to_its_registered_topic() -> None:
    from trainer.loop import topic_for

    assert topic_for(_saved()).name == "flywheel.checkpoints"
    assert topic_for(_feedback()).name == "flywheel.feedback"


def _saved():
    from schemas.observations import BlobRef
    from schemas.training import CheckpointSaved

    return CheckpointSaved(source="t/0", correlation_id="r", checkpoint_id="c", run_id="r", stage="sft", step=1,
                           base_model="b", snapshot_id="s", weights=BlobRef(sha256="0" * 64, size=1))


def _feedback():
    from schemas.training import TrainingFeedbackIssued

    return TrainingFeedbackIssued(source="t/0", correlation_id="r", run_id="r")


def test_cli_eval_prints_an_eval_reported_event(tiny_model: Path) -> None:
    result = CliRunner().invoke(app, ["eval", str(tiny_model), "--split", "test", "--max-steps", "1", "--limit", "3",
                                      "--max-new-tokens", "8", "--json"])
    assert result.exit_code == 0, result.output
    event = validate_event(json.loads(result.stdout))
    assert event.type == "eval.reported" and event.split == "test"
    assert event.validity == 0.0 and event.episodes == 3 and event.overall == 0.0


def test_cli_eval_of_a_missing_checkpoint_is_one_sentence(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["eval", str(tmp_path / "none")])
    assert result.exit_code == 1 and "config.json is missing" in " ".join(result.output.split())


def test_suite_eval_with_a_missing_model_policy_is_one_sentence(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["suite", "eval", "--policy", f"model:{tmp_path / 'none'}"])
    assert result.exit_code == 2 and "config.json is missing" in " ".join(result.output.split())


def test_cli_train_sft_then_rl(tiny_model: Path, oracle_snapshot: Path, tmp_path: Path) -> None:
    sft = CliRunner().invoke(app, ["train", "sft", "--model", str(tiny_model), "--snapshot", str(oracle_snapshot),
                                   "--out", str(tmp_path / "sft"), "--max-steps", "1"])
    assert sft.exit_code == 0, sft.output
    assert "SFT sft-" in sft.stdout and (tmp_path / "sft" / "flywheel_checkpoint.json").is_file()
    rl = CliRunner().invoke(app, ["train", "rl", "--model", str(tmp_path / "sft"), "--out", str(tmp_path / "rl"),
                                  "--steps", "1", "--group", "2", "--max-completion-length", "16",
                                  "--max-tool-calls", "1"])
    assert rl.exit_code == 0, rl.output
    assert "GRPO+CARE rl-" in rl.stdout and "regimes" in rl.stdout
    bad = CliRunner().invoke(app, ["train", "sft", "--model", str(tiny_model), "--snapshot", str(tmp_path / "nope"),
                                   "--out", str(tmp_path / "x")])
    assert bad.exit_code == 1 and "no data.parquet" in " ".join(bad.output.split())


def test_feedback_carries_loss_success_tokens_and_tool_calls_per_family_template_and_tier() -> None:
    from trainer.evaluate import EpisodeRecord, summarise
    from trainer.loop import feedback_event

    records = [EpisodeRecord("a-1", "a", "tool", "easy", 1.0, 1.0, 2, 40, 2, 0),
               EpisodeRecord("a-2", "a", "tool", "hard", 0.0, 0.0, 3, 80, 3, 1),
               EpisodeRecord("b-1", "b", "memory", "hard", 0.25, 0.0, 1, 20, 0, 0)]
    summary = summarise("p", "dev", records, validity=0.75, prompt_tokens=[500, 600])
    event = feedback_event(summary, run_id="r", losses={"a": 0.5, "b": 1.5})
    stats = {(s.scope, s.key): s for s in event.stats}
    assert stats[("template", "a")].loss == 0.5 and stats[("template", "a")].success == 0.5
    assert stats[("template", "a")].mean_output_tokens == 60 and stats[("template", "a")].mean_tool_calls == 2.5
    assert stats[("family", "memory")].loss == 1.5 and stats[("tier", "hard")].loss == 1.0
    assert stats[("tier", "hard")].episodes == 2 and event.weak_templates == ["b"]
    assert event.template_weights["b"] > event.template_weights["a"]  # the weaker template is sampled more


def test_grpo_draws_from_templates_the_model_sometimes_solves() -> None:
    from trainer.evaluate import EpisodeRecord, EvalSummary
    from trainer.loop import LoopConfig, _rl_tasks, learnable_templates

    def record(template: str, success: float) -> EpisodeRecord:
        return EpisodeRecord(task_id=f"{template}-{success}", template=template, family="tool", tier="easy",
                             score=success, success=success, steps=1, output_tokens=1, tool_calls=1, invalid=0)

    records = [record("star_relation", 1.0), record("star_relation", 0.0), record("text_relation", 0.0),
               record("text_relation", 0.0), record("new_number_relation", 1.0)]
    summary = EvalSummary(policy="p", split="dev", episodes=5, overall=0.4, overall_ci=(0, 1), success=0.4,
                          success_ci=(0, 1), families={}, family_ci={}, tiers={}, templates={},
                          mean_output_tokens=1, mean_tool_calls=1, validity=1, median_prompt_tokens=1,
                          records=records)
    assert learnable_templates(summary) == ["star_relation"]  # never solved and always solved are out
    tasks = _rl_tasks(LoopConfig(), {}, 2, 6, learnable_templates(summary))
    assert {t.template for t in tasks} == {"star_relation"} and all(t.split == "train" for t in tasks)
    anything = _rl_tasks(LoopConfig(), {}, 2, 6, [])  # nothing learnable: every train template may be drawn
    assert len(anything) == 6


def test_a_learning_run_scores_the_base_model_then_each_generation_on_dev_and_test(
        tiny_model: Path, oracle_snapshot: Path, tmp_path: Path) -> None:
    """eval_base adds generation 0 (the base model, no checkpoint of its own); eval_splits scores
    every checkpoint on dev and on the held-out test templates, each published; only dev steers."""
    from dataclasses import replace

    from devices.suite.registry import get_template

    config = replace(SMALL, generations=1, eval_base=True, eval_splits="dev,test", tiers="easy", eval_templates=0,
                     eval_limit=3, next_action_tasks=0, general=False)
    events = []
    summaries = run_generations(tiny_model, oracle_snapshot, tmp_path, config, run_id="run-l", on_event=events.append)
    assert [(s.generation, s.stage) for s in summaries] == [(0, "base"), (1, "sft")]
    assert summaries[0].checkpoint_id == f"base:{tiny_model.name}"
    for s in summaries:
        assert (s.evaluation.split, s.held_out.split) == ("dev", "test")
        assert s.evaluation.episodes == s.held_out.episodes == 3  # eval_limit, instance by instance
        assert {get_template(r.template).tier for r in s.evaluation.records + s.held_out.records} == {"easy"}
    assert len({r.template for r in summaries[0].evaluation.records}) == 3  # a limit covers templates first
    reports = [e for e in events if e.type == "eval.reported"]
    assert [(e.subject_id, e.split) for e in reports] == [
        (f"base:{tiny_model.name}", "dev"), (f"base:{tiny_model.name}", "test"),
        (summaries[1].checkpoint_id, "dev"), (summaries[1].checkpoint_id, "test")]
    feedback = [e for e in events if e.type == "training.feedback_issued"]
    assert len(feedback) == 1  # the trained generation's, from dev; the base model trains nothing
    assert set(feedback[0].template_weights) <= {r.template for r in summaries[1].evaluation.records}
    from trainer.loop import plot_generations, summary_table

    assert plot_generations(summaries, tmp_path / "g.png").stat().st_size > 0
    assert "test overall [95% CI]" in [c.header for c in summary_table(summaries).columns]


def test_learning_config_names_a_bad_tier_or_split() -> None:
    import pytest

    from trainer.loop import LEARNING_DEFAULTS, loop_config

    config = loop_config("smollm2", learning=True)
    assert (config.tiers, config.split_list, config.eval_base, config.sft_steps) == ("easy", ["dev", "test"], True, 0)
    assert all(getattr(config, key) == value for key, value in LEARNING_DEFAULTS.items())
    with pytest.raises(ValueError, match="tiers must name tiers"):
        loop_config("smollm2", ["tiers=eazy"], learning=True)
    with pytest.raises(ValueError, match="eval_splits must be dev and/or test"):
        loop_config("smollm2", ["eval_splits=train"])


def test_grpo_tasks_keep_to_the_configured_tiers() -> None:
    from devices.suite.registry import get_template
    from trainer.loop import _rl_tasks

    tasks = _rl_tasks(LoopConfig(tiers="easy"), {}, 2, 12, [])
    assert {get_template(t.template).tier for t in tasks} == {"easy"}


def test_auto_eval_weights_are_bf16_only_where_the_hardware_multiplies_bf16(monkeypatch) -> None:
    """Emulated bf16 decodes ~5x slower than fp32 on a CPU without avx512_bf16/amx_bf16
    (measured on a 2-core AMD EPYC with AVX2 only), so auto must not pick it there."""
    import torch

    from trainer import precision
    from trainer.loop import loop_config

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    learning = loop_config("smollm2", learning=True)
    assert learning.eval_dtype == "auto"
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: False)
    assert learning.policy_dtype is None  # load_policy's default: fp32 on a CPU
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: True)
    assert learning.policy_dtype == "bfloat16"
    assert LoopConfig(eval_dtype="float32").policy_dtype == "float32"  # a named dtype is kept
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: False)
    assert LoopConfig().policy_dtype == "bfloat16"
