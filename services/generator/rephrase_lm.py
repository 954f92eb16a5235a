"""Goal rephrasing with a local language model (FLYWHEEL_GENERATOR_REPHRASE_MODEL).

The model (any Hugging Face causal LM in a local directory; nothing is downloaded) rewrites
the goal greedily, so the same goal always gets the same rewrite. A rewrite is kept only
when it is one non-empty line, differs from the goal, and still carries every parameter
value the goal mentions (names, titles, times); otherwise the rule-based rephrasing is used
and the rejection is counted. The generator still verifies the task either way.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

__all__ = ["LMRephraser", "keeps_values"]

logger = logging.getLogger(__name__)

#: A goal is one or two sentences: more new tokens than this is a model rambling.
MAX_NEW_TOKENS = 64
PROMPT = ("Rewrite the instruction in other words. Keep every name, number, time and title "
          "exactly.\nInstruction: {goal}\nRewrite:")


def keeps_values(goal: str, rewrite: str, params: dict[str, Any]) -> bool:
    """True when every string parameter value the goal mentions is still in the rewrite."""
    for value in params.values():
        if isinstance(value, str) and len(value) >= 2 and value in goal and value not in rewrite:
            return False
    return True


class LMRephraser:
    """Greedy rewrites by a local causal LM; `rejected` counts rewrites that failed the check."""

    def __init__(self, model_dir: str | Path) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path = Path(model_dir)
        if not path.is_dir():
            raise ValueError(f"the rephrasing model directory {path} does not exist; set "
                             "FLYWHEEL_GENERATOR_REPHRASE_MODEL to a local model directory or "
                             "unset it for rule-based rephrasing")
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        self.model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True)
        self.model.eval()
        self.accepted = 0
        self.rejected = 0

    def rewrite(self, goal: str, params: dict[str, Any]) -> str | None:
        """The model's rewrite of `goal`, or None when it fails the check."""
        import torch

        inputs = self.tokenizer(PROMPT.format(goal=goal), return_tensors="pt")
        with torch.no_grad():
            output = self.model.generate(**inputs, max_new_tokens=MAX_NEW_TOKENS,
                                         do_sample=False,
                                         pad_token_id=self.tokenizer.pad_token_id
                                         or self.tokenizer.eos_token_id)
        text = self.tokenizer.decode(output[0, inputs["input_ids"].shape[1]:],
                                     skip_special_tokens=True).strip().split("\n")[0].strip()
        if text and text != goal and keeps_values(goal, text, params):
            self.accepted += 1
            return text
        self.rejected += 1
        return None
