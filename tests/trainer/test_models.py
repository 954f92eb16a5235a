"""Model directories: the tiny model builds and loads offline, the planner template renders tool calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainer.models import ModelError, load_model


def test_tiny_model_loads_with_planner_template_and_tool_calling(tiny_model: Path) -> None:
    from trl.chat_template_utils import parse_response, supports_tool_calling

    loaded = load_model(tiny_model)
    tokenizer = loaded.tokenizer
    assert supports_tool_calling(tokenizer)
    assert tokenizer.eos_token == "<|im_end|>" and loaded.model.config.vocab_size == len(tokenizer)
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False,
                                           add_generation_prompt=True)
    answer = '<tool_call>\n{"name": "finish", "arguments": {"answer": "42"}}\n</tool_call><|im_end|>'
    parsed = parse_response(tokenizer, tokenizer(answer)["input_ids"], prefix=tokenizer(prompt)["input_ids"])
    assert parsed["tool_calls"][0]["function"] == {"name": "finish", "arguments": {"answer": "42"}}


def test_missing_model_directory_is_one_clear_sentence(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="flywheel model tiny"):
        load_model(tmp_path / "nowhere")
