"""SFT cold start on a curator-shaped snapshot: parameters change, loss falls, the checkpoint records lineage."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from safetensors.torch import load_file

from trainer.data import SnapshotError, read_snapshot, render_examples
from trainer.models import load_model
from trainer.sft import CHECKPOINT_FILE, SftConfig, build_sft_trainer, run_sft


def _weights(path: Path) -> dict:
    return load_file(str(path / "model.safetensors"))


@pytest.mark.parametrize("method", ["full", "lora"])
def test_sft_changes_parameters_lowers_loss_and_records_lineage(tiny_model: Path, oracle_snapshot: Path,
                                                                tmp_path: Path, method: str) -> None:
    config = SftConfig(method=method, max_steps=8, batch_size=4, learning_rate=3e-3 if method == "full" else 1e-2)
    result = run_sft(tiny_model, oracle_snapshot, tmp_path / "ckpt", config)
    assert result.steps == 8
    assert result.losses[-1] < result.losses[0]
    before, after = _weights(tiny_model), _weights(result.checkpoint_dir)
    changed = [k for k in before if not (before[k] == after[k]).all()]
    assert changed, "no parameter changed"
    if method == "lora":  # merged adapters touch the attention/MLP projections, never the embeddings
        assert all("embed" not in k for k in changed)
    meta = json.loads((result.checkpoint_dir / CHECKPOINT_FILE).read_text())
    snapshot = read_snapshot(oracle_snapshot)
    assert meta["snapshot_id"] == "snap-test" and meta["snapshot_sha256"] == snapshot.sha256
    assert meta["base_model"] == "tiny-qwen2" and meta["config"]["method"] == method
    assert len(meta["git_commit"]) in (40, 7) or meta["git_commit"] == "unknown"
    assert set(meta["template_losses"]) == {"star_relation", "text_relation", "new_number_relation"}
    assert all(loss > 0 for loss in meta["template_losses"].values()) and result.template_losses == meta[
        "template_losses"]
    assert load_model(result.checkpoint_dir).model is not None  # a checkpoint is a loadable model directory


def test_loss_is_on_the_answer_only(tiny_model: Path, oracle_snapshot: Path, tmp_path: Path) -> None:
    trainer, _, skipped = build_sft_trainer(tiny_model, oracle_snapshot, tmp_path,
                                            SftConfig(max_steps=1, pack_episodes=False))
    assert skipped == 0
    row = trainer.train_dataset[0]
    batch = trainer.data_collator([row])
    labels, ids = batch["labels"][0].tolist(), batch["input_ids"][0].tolist()
    tokenizer = trainer.processing_class
    answer_start = next(i for i, label in enumerate(labels) if label != -100)
    prompt_ids = tokenizer(row["prompt"], add_special_tokens=False)["input_ids"]
    assert answer_start == len(prompt_ids) and ids[:answer_start] == prompt_ids  # no loss on the prompt
    assert labels[answer_start:] == ids[answer_start:]  # loss on every answer token, <|im_end|> included
    assert ids[-1] == tokenizer.eos_token_id
    assert tokenizer.decode(ids[answer_start:]).startswith("<tool_call>")


def test_snapshot_rows_with_invalid_completions_are_skipped_not_trained(tiny_model: Path, tmp_path: Path) -> None:
    table = pa.table({"prompt": ["Goal: call Bob", "Goal: call Ann"],
                      "completion": [('{"action_type": "tool_call", "name": "contacts.search", '
                                     '"arguments": {"query": "Bob"}}'), "I will call Ann now."],
                      "source_event_id": ["e1", "e2"]})
    (tmp_path / "snap").mkdir()
    pq.write_table(table, tmp_path / "snap" / "data.parquet")
    examples, skipped = render_examples(read_snapshot(tmp_path / "snap"), load_model(tiny_model).tokenizer)
    assert skipped == 1 and len(examples) == 1 and "Goal: call Bob" in examples[0]["prompt"]


def test_snapshot_without_completion_column_is_refused(tmp_path: Path) -> None:
    (tmp_path / "bad").mkdir()
    pq.write_table(pa.table({"prompt": ["x"]}), tmp_path / "bad" / "data.parquet")
    with pytest.raises(SnapshotError, match="completion"):
        read_snapshot(tmp_path / "bad")
    with pytest.raises(SnapshotError, match="no data.parquet"):
        read_snapshot(tmp_path / "missing")


def _multi_family_snapshot(tmp_path: Path) -> Path:
    """Oracle rows of templates whose answers span tool_call, delegate, use_skill, memory and finish."""
    from devices.suite.registry import templates_for
    from trainer.data import build_oracle_snapshot

    names = {t.family: t.name for t in templates_for("train")}  # one template per family
    return build_oracle_snapshot(tmp_path / "snap", templates=sorted(names.values()), snapshot_id="every-family")


def test_no_row_is_dropped_for_length_every_action_type_is_trained(tiny_model: Path, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    snap = _multi_family_snapshot(tmp_path)
    table = pq.read_table(snap / "data.parquet")
    wanted = set(table.column("action_type").to_pylist())
    assert {"finish", "tool_call"} <= wanted and len(wanted) >= 3
    # a max_length below the longest rows (above the longest header): they are shortened, not dropped
    tokenizer = load_model(tiny_model).tokenizer
    full, _ = render_examples(read_snapshot(snap), tokenizer)
    longest = max(len(tokenizer(e["prompt"] + e["completion"], add_special_tokens=False)["input_ids"]) for e in full)
    limit = longest - 150
    trainer, _, skipped = build_sft_trainer(tiny_model, snap, tmp_path / "out", SftConfig(max_steps=1, max_length=limit))
    report = trainer.flywheel_render_report
    assert skipped == 0 and report.used == table.num_rows and report.sequences == len(trainer.train_dataset)
    assert report.shortened > 0 and report.dropped_steps >= report.shortened
    assert set(report.rows_by_action) == wanted
    assert all(len(row["input_ids"]) <= limit for row in trainer.train_dataset)
    # every answer is whole: the loss covers the full answer of every row, through <|im_end|>
    for row in trainer.train_dataset:
        labels = trainer.data_collator([row])["labels"][0].tolist()
        answer = [t for t in labels if t != -100]
        assert answer[-1] == tokenizer.eos_token_id
        assert tokenizer.decode(answer).startswith("<tool_call>") and "</tool_call>" in tokenizer.decode(answer)


def test_a_row_that_cannot_fit_stops_the_run_naming_it(tiny_model: Path, tmp_path: Path) -> None:
    from trainer.data import RowTooLong

    snap = _multi_family_snapshot(tmp_path)
    with pytest.raises(RowTooLong, match=r"every-family's .+:0 needs \d+ tokens .*max_length=64"):
        build_sft_trainer(tiny_model, snap, tmp_path / "out", SftConfig(max_steps=1, max_length=64))


def _answer_spans(mask: list[int]) -> list[tuple[int, int]]:
    spans, start = [], None
    for i, bit in enumerate(mask + [0]):
        if bit and start is None:
            start = i
        elif not bit and start is not None:
            spans.append((start, i))
            start = None
    return spans


def test_packed_episodes_teach_exactly_the_rows_with_fewer_tokens(tiny_model: Path, tmp_path: Path) -> None:
    """Every answer in a packed sequence is a row's answer, preceded by exactly that row's prompt tokens;
    every row is taught once; the slip of a recovery episode is context, never a target."""
    from collections import Counter

    from devices.suite.registry import templates_for
    from trainer.data import RenderReport, build_oracle_snapshot, pack_episodes

    names = sorted({t.family: t.name for t in templates_for("train")}.values())
    snap = build_oracle_snapshot(tmp_path / "snap", templates=names, recovery=1.0, snapshot_id="packed")
    tokenizer = load_model(tiny_model).tokenizer
    rows, _ = render_examples(read_snapshot(snap), tokenizer)
    report = RenderReport()
    sequences = pack_episodes(rows, tokenizer, report)

    def ids(text: str) -> tuple[int, ...]:
        return tuple(tokenizer(text, add_special_tokens=False)["input_ids"])

    wanted = Counter((ids(r["prompt"]), ids(r["completion"])) for r in rows)
    taught = Counter((tuple(s["input_ids"][:a]), tuple(s["input_ids"][a:b]))
                     for s in sequences for a, b in _answer_spans(s["completion_mask"]))
    assert taught == wanted
    assert len(sequences) < len(rows) and report.sequences == len(sequences)
    assert report.sequence_tokens < sum(len(p) + len(c) for p, c in wanted.elements())
    assert any(r for r in read_snapshot(snap).table.column("recovery").to_pylist())  # slips were played


def test_a_row_that_is_no_prefix_of_its_episode_is_trained_alone(tiny_model: Path, tmp_path: Path) -> None:
    from trainer.data import RenderReport, pack_episodes

    tokenizer = load_model(tiny_model).tokenizer
    head = "<|im_start|>user\nGoal: x<|im_end|>\n<|im_start|>assistant\n"
    step1 = {"prompt": head, "completion": "A<|im_end|>"}
    step2 = {"prompt": head + "A<|im_end|>\n<|im_start|>user\nok<|im_end|>\n<|im_start|>assistant\n",
             "completion": "B<|im_end|>"}
    other = {"prompt": head, "completion": "C<|im_end|>"}  # same header, another answer: not a prefix of step2
    report = RenderReport()
    sequences = pack_episodes([step2, other, step1], tokenizer, report)
    assert len(sequences) == 2 and report.unpacked == 0
    assert sorted(len(_answer_spans(s["completion_mask"])) for s in sequences) == [1, 2]


def test_trl_puts_the_loss_on_every_packed_answer(tiny_model: Path, oracle_snapshot: Path, tmp_path: Path) -> None:
    trainer, _, _ = build_sft_trainer(tiny_model, oracle_snapshot, tmp_path, SftConfig(max_steps=1))
    report = trainer.flywheel_render_report
    assert report.sequences == len(trainer.train_dataset) < report.used
    answers = 0
    for row in trainer.train_dataset:
        labels = trainer.data_collator([row])["labels"][0].tolist()
        spans = _answer_spans([int(label != -100) for label in labels])
        answers += len(spans)
        assert all(labels[b - 1] == trainer.processing_class.eos_token_id for _, b in spans)
    assert answers == report.used


def test_template_losses_score_only_the_answer_as_the_labelled_loss_does(tiny_model: Path, oracle_snapshot: Path) -> None:
    import torch

    from trainer.sft import template_losses

    loaded = load_model(tiny_model, dtype="float32")
    model, tokenizer = loaded.model, loaded.tokenizer
    snapshot = read_snapshot(oracle_snapshot)
    fast = template_losses(model, tokenizer, snapshot, rows_per_template=1)
    examples, _ = render_examples(snapshot, tokenizer, with_template=True)
    for template, loss in fast.items():
        row = next(e for e in examples if e["template"] == template)
        prompt = tokenizer(row["prompt"], add_special_tokens=False)["input_ids"]
        answer = tokenizer(row["completion"], add_special_tokens=False)["input_ids"]
        with torch.no_grad():  # the whole sequence through the LM head, the prompt masked out of the loss
            full = model(input_ids=torch.tensor([prompt + answer]),
                         labels=torch.tensor([[-100] * len(prompt) + answer])).loss
        assert loss == pytest.approx(float(full), rel=1e-4)
    assert template_losses(model, tokenizer, snapshot, rows_per_template=1, bf16=True).keys() == fast.keys()
