"""General capability beside the phone: perplexity on the bundled text and non-mobile JSON tool
use, on a real (tiny) model; the tool-use checker passes the right call and fails a wrong one."""

from __future__ import annotations

import json
import math
from pathlib import Path

from tests.trainer.conftest import tool_call_bias
from trainer.general import ASSETS, _answer_ok, general_capability, perplexity, tool_use
from trainer.models import load_model


def test_perplexity_on_the_bundled_text_is_finite_and_falls_with_a_text_the_model_knows(tiny_model: Path) -> None:
    loaded = load_model(tiny_model)
    ppl, tokens = perplexity(loaded.model, loaded.tokenizer)
    assert tokens > 200 and 1.0 < ppl < 1e6 and math.isfinite(ppl)
    repeated, _ = perplexity(loaded.model, loaded.tokenizer, "the " * 200)
    assert repeated != ppl  # it reads the text, not a constant


def test_tool_use_counts_the_right_call_and_only_that(tiny_model: Path) -> None:
    loaded = load_model(tiny_model)
    items = json.loads((ASSETS / "general_tool_use.json").read_text())
    right = json.dumps(items[0]["expected"])
    loaded.model.generation_config.sequence_bias = tool_call_bias(loaded.tokenizer, right)
    assert tool_use(loaded.model, loaded.tokenizer, items[:1]) == 1.0
    assert tool_use(loaded.model, loaded.tokenizer, items[1:2]) == 0.0  # the same answer to another request


def test_the_answer_check_is_exact_about_the_tool_and_its_arguments() -> None:
    want = {"name": "get_weather", "arguments": {"city": "Lisbon"}}
    assert _answer_ok({"name": "get_weather", "arguments": {"city": " lisbon "}}, want)
    assert _answer_ok({"name": "tool_call", "arguments": want}, want)  # the planner's own wrapping
    assert not _answer_ok({"name": "get_weather", "arguments": {"city": "Porto"}}, want)
    assert not _answer_ok({"name": "get_weather", "arguments": {"city": "Lisbon", "units": "C"}}, want)
    assert not _answer_ok({"name": "get_time", "arguments": {"city": "Lisbon"}}, want)
    assert not _answer_ok(None, want)


def test_the_report_line_says_both(tiny_model: Path) -> None:
    loaded = load_model(tiny_model)
    report = general_capability(loaded.model, loaded.tokenizer)
    assert report.tool_items == 8 and 0.0 <= report.tool_use <= 1.0
    assert report.line().startswith("general capability: perplexity ") and "JSON tool use" in report.line()
