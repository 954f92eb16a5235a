"""Proposals from a local language model: the same deltas, the same gate, only another author.

The model sees one failure group (category, app, template, a few summaries) and the parts
of the current harness it may change, and answers with a JSON list of changes
(`{"component", "op", "name", "spec"}`). The answer is parsed and applied to the spec;
anything that is not valid JSON, not a list of changes, or does not apply cleanly is
dropped and counted, never raised. `generate` is any text-in/text-out callable; `load_local`
builds one from a model directory (transformers, local files only: nothing is downloaded).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from schemas.harness import HarnessChange
from services.dataflow.evolution.delta import MAX_CHANGES, DeltaError, apply_delta, spec_version
from services.dataflow.evolution.propose import Proposal, Trace, group_traces, proposal_id

__all__ = ["ModelProposer", "ProposerStats", "load_local", "parse_changes", "prompt_for"]

logger = logging.getLogger(__name__)

Generate = Callable[[str], str]
#: Failure summaries shown per group: enough to see the pattern, short enough for a small model.
_EXAMPLES = 3
#: Playbook lines shown (the newest): the model needs to know what is already said.
_PLAYBOOK_LINES = 8
_JSON_LIST = re.compile(r"\[.*\]", re.DOTALL)


@dataclass
class ProposerStats:
    asked: int = 0
    proposed: int = 0
    dropped: dict[str, int] = field(default_factory=dict)

    def drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1


def prompt_for(spec: Mapping[str, Any], key: tuple[str, str, str], group: Sequence[Trace]) -> str:
    """The instruction for one failure group."""
    category, app, template = key
    tools = spec.get("tools", {})
    memory = spec.get("memory", {})
    skills = [s.get("name") for s in spec.get("skills", [])]
    examples = "\n".join(f"- {t.summary}" for t in group[:_EXAMPLES])
    playbook = "\n".join(f"- {line}" for line in list(spec.get("playbook", []))[-_PLAYBOOK_LINES:])
    return (
        "You improve the harness of a phone agent. Failures of one kind:\n"
        f"category={category} app={app} task={template} count={len(group)}\n{examples}\n"
        f"Current playbook:\n{playbook}\nSkills: {', '.join(map(str, skills))}\n"
        f"Hidden tools: {', '.join(tools.get('hidden', []))}\nMemory policy: "
        f"{json.dumps(memory, sort_keys=True)}\n"
        "Answer with a JSON list of at most 3 changes, each {\"component\": one of "
        "tool|skill|memory|prompt, \"op\": add|update|remove, \"name\": ..., \"spec\": {...}}. "
        "A playbook line is {\"component\": \"prompt\", \"op\": \"add\", \"name\": a short "
        "name, \"spec\": {\"text\": the line}}. Answer with the JSON only.\n"
    )


def parse_changes(text: str) -> list[HarnessChange]:
    """The changes in a model's answer (the first JSON list in it); ValueError when there is
    none or an item is not a valid change."""
    match = _JSON_LIST.search(text)
    if match is None:
        raise ValueError("the answer holds no JSON list")
    try:
        items = json.loads(match.group(0))
    except json.JSONDecodeError as error:
        raise ValueError(f"the answer's list is not JSON ({error.msg})") from None
    if not isinstance(items, list) or not items:
        raise ValueError("the answer's list is empty")
    if len(items) > MAX_CHANGES:
        raise ValueError(f"{len(items)} changes is a rewrite, not a delta")
    try:
        return [HarnessChange.model_validate(item) for item in items]
    except ValidationError as error:
        first = error.errors()[0]
        raise ValueError(f"a change is invalid at {'.'.join(map(str, first['loc']))}: "
                         f"{first['msg']}") from None


class ModelProposer:
    """Asks `generate` for a delta per failure group with enough support."""

    def __init__(self, generate: Generate, *, min_support: int = 2) -> None:
        self.generate = generate
        self.min_support = min_support
        self.stats = ProposerStats()

    def propose(self, spec: Mapping[str, Any], traces: Sequence[Trace],
                exclude: frozenset[str] = frozenset()) -> list[Proposal]:
        base = spec_version(spec)
        out: list[Proposal] = []
        for key, group in group_traces(traces).items():
            if len(group) < self.min_support:
                continue
            self.stats.asked += 1
            try:
                answer = self.generate(prompt_for(spec, key, group))
                changes = parse_changes(answer)
                apply_delta(spec, changes)
            except (ValueError, DeltaError) as error:
                logger.info("model proposal for %s dropped: %s", key, error)
                self.stats.drop(type(error).__name__ if isinstance(error, DeltaError)
                                else "unparsable")
                continue
            pid = proposal_id(base, changes)
            if pid in exclude or any(p.proposal_id == pid for p in out):
                self.stats.drop("duplicate")
                continue
            self.stats.proposed += 1
            out.append(Proposal(
                proposal_id=pid, base=base, changes=tuple(changes),
                motivated_by=tuple(t.event_id for t in group), rule="model",
                rationale=f"model proposal for {key[0]} on {key[1]}/{key[2]} "
                          f"({len(group)} failures)", group=key))
        return out


def load_local(model_dir: str | Path, *, max_new_tokens: int = 256) -> Generate:
    """Greedy generation from a causal LM in a local directory (never downloads)."""
    path = Path(model_dir)
    if not path.is_dir():
        raise FileNotFoundError(f"no model directory at {path}; point the evolver's "
                                "proposer_model at a local model (flywheel model import-smollm2)")
    from transformers import AutoModelForCausalLM, AutoTokenizer  # slow import: only when used
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True)
    model.eval()

    def generate(prompt: str) -> str:
        import torch

        if getattr(tokenizer, "chat_template", None):
            text = tokenizer.apply_chat_template([{"role": "user", "content": prompt}],
                                                 tokenize=False, add_generation_prompt=True)
        else:
            text = prompt
        inputs = tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            output = model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False,
                                    pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id)
        return tokenizer.decode(output[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)

    return generate
