"""General capability beside the phone: does training on mobile tasks cost the model what it
could do before? Two offline checks shipped with the project, reported by `flywheel eval`.

- **Perplexity** on `assets/general_text.txt`, five short paragraphs of everyday prose (rivers,
  recipes, a library's hours, time zones, exercise): exp of the mean next-token loss, in chunks
  of at most 512 tokens. Lower is better; a rise after training means the model forgot language.
- **JSON tool use** on `assets/general_tool_use.json`: 8 requests that are not about a phone
  (a calculator, the weather, translation, units, a dictionary, a stock price, a library
  search, a world clock), each with one tool described as JSON. The model answers greedily; an
  answer counts when its first JSON object names the tool with exactly the expected arguments
  (strings compared case- and space-insensitively, numbers by value).

Both run on whatever `load_model` loads, base model or checkpoint, so a before/after pair is two
calls on the two folders.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["GeneralReport", "general_capability", "perplexity", "tool_use"]

ASSETS = Path(__file__).parent / "assets"
CHUNK_TOKENS = 512
ANSWER_TOKENS = 64


@dataclass(frozen=True)
class GeneralReport:
    perplexity: float
    text_tokens: int
    tool_use: float
    tool_items: int

    def line(self) -> str:
        return (f"general capability: perplexity {self.perplexity:.1f} on the bundled text "
                f"({self.text_tokens} tokens) · JSON tool use {round(self.tool_use * self.tool_items)}/{self.tool_items}")


def perplexity(model: Any, tokenizer: Any, text: str | None = None) -> tuple[float, int]:
    """(perplexity, tokens) of the model on `text` (default: the bundled sample)."""
    import torch

    text = text if text is not None else (ASSETS / "general_text.txt").read_text(encoding="utf-8")
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    device = next(model.parameters()).device
    total, count = 0.0, 0
    model.eval()
    with torch.no_grad():
        for start in range(0, len(ids) - 1, CHUNK_TOKENS):
            chunk = ids[start:start + CHUNK_TOKENS + 1]
            if len(chunk) < 2:
                break
            tensor = torch.tensor([chunk], device=device)
            loss = model(input_ids=tensor, labels=tensor).loss
            total += float(loss) * (len(chunk) - 1)
            count += len(chunk) - 1
    return (math.exp(min(total / count, 700.0)) if count else float("nan")), count


def _same(have: Any, want: Any) -> bool:
    if isinstance(want, str):
        return isinstance(have, str) and " ".join(have.split()).casefold() == " ".join(want.split()).casefold()
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        return isinstance(have, (int, float)) and not isinstance(have, bool) and float(have) == float(want)
    return bool(have == want)


def _first_object(text: str) -> Any:
    decoder = json.JSONDecoder()
    for start in (i for i, ch in enumerate(text) if ch == "{"):
        try:
            return decoder.raw_decode(text[start:])[0]
        except json.JSONDecodeError:
            continue
    return None


def _answer_ok(answer: Any, expected: dict[str, Any]) -> bool:
    if not isinstance(answer, dict):
        return False
    if isinstance(answer.get("arguments"), dict) and answer.get("name") == "tool_call":  # the planner's wrapping
        answer = answer["arguments"]
    arguments = answer.get("arguments") if isinstance(answer.get("arguments"), dict) else {}
    return (answer.get("name") == expected["name"] and set(arguments) == set(expected["arguments"])
            and all(_same(arguments[k], v) for k, v in expected["arguments"].items()))


def tool_use(model: Any, tokenizer: Any, items: list[dict[str, Any]] | None = None) -> float:
    """Share of the bundled (or given) non-mobile tool requests answered with the right call."""
    import torch

    items = items if items is not None else json.loads((ASSETS / "general_tool_use.json").read_text())
    device = next(model.parameters()).device
    right = 0
    for item in items:
        tools = "\n".join(json.dumps(tool) for tool in item["tools"])
        messages = [{"role": "system", "content": "Answer with one JSON object {\"name\": TOOL, \"arguments\": {...}} "
                                                  "calling this tool:\n" + tools},
                    {"role": "user", "content": item["request"]}]
        prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        ids = torch.tensor([tokenizer(prompt, add_special_tokens=False)["input_ids"]], device=device)
        with torch.no_grad():
            out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=ANSWER_TOKENS,
                                 do_sample=False, pad_token_id=tokenizer.pad_token_id,
                                 eos_token_id=tokenizer.eos_token_id)
        text = tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True)
        right += _answer_ok(_first_object(text), item["expected"])
    return right / len(items) if items else 0.0


def general_capability(model: Any, tokenizer: Any) -> GeneralReport:
    """Both checks on one loaded model."""
    ppl, tokens = perplexity(model, tokenizer)
    items = json.loads((ASSETS / "general_tool_use.json").read_text())
    return GeneralReport(perplexity=ppl, text_tokens=tokens, tool_use=tool_use(model, tokenizer, items),
                         tool_items=len(items))
