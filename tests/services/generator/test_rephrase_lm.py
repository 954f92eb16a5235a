"""LM rephrasing: a local model's rewrite is kept only when it carries every value; a model
that garbles the goal falls back to the rule (here a tiny untrained model, built locally)."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.generator.construct import build_catalogue, instantiate, rephrase
from services.generator.rephrase_lm import LMRephraser, keeps_values


def test_keeps_values_rejects_a_rewrite_that_drops_a_value() -> None:
    params = {"person": "Priya Raman", "time": "07:05"}
    goal = "Text Priya Raman that I will be there at 07:05."
    assert keeps_values(goal, "Send Priya Raman a message: there at 07:05.", params)
    assert not keeps_values(goal, "Send Priya a message: there at 07:05.", params)
    assert not keeps_values(goal, "Send Priya Raman a message.", params)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    out = tmp_path_factory.mktemp("tiny-lm")
    goals = [instantiate(build_catalogue(0), t.name, 0, 0).task.goal
             for t in build_catalogue(0).templates]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(goals * 2, trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>",
                                        pad_token="<|endoftext|>")
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tokenizer), n_positions=512, n_embd=32,
                                       n_layer=1, n_head=2))
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def test_an_untrained_model_falls_back_to_the_rule_and_is_counted(tiny_model: Path) -> None:
    rephraser = LMRephraser(tiny_model)
    catalogue = build_catalogue(0)
    base = instantiate(catalogue, catalogue.templates[0].name, 0, 0)
    by_model = rephrase(base, 1, rephraser)
    by_rule = rephrase(base, 1)
    assert rephraser.rejected == 1 and rephraser.accepted == 0
    assert by_model.task.goal == by_rule.task.goal != base.task.goal
    assert rephrase(base, 1, rephraser).task.goal == by_model.task.goal  # deterministic


def test_a_missing_model_directory_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        LMRephraser(tmp_path / "nope")
