"""The planner policy: a local causal LM that answers the harness context with one action.

`ModelPolicy` follows the harness's Policy protocol (`begin(goal, catalogue)`,
`next_action(observation)`): it sees the goal, the catalogue and observations only. Output that is not a valid action
is counted as `invalid` and ends the episode with `finish`; it never raises. With `constrained=True`
the answer is decoded under lm-format-enforcer's JSON-schema constraint: the episode's
`answer_schema` (one planner action, tools/skills/sub-agents of its catalogue, closed objects).
`generate_batch` decodes many episodes' prompts at once (trainer.batched drives it); on a GPU
`load_policy` puts the model there in bf16.

One episode at a time (the CPU path), each step's prompt is the previous prompt plus the answer and
the new observation, so with `prefix_cache` (the default) the episode keeps its attention cache
between steps and only the new tokens are prefilled: the shared prefix is found token by token, so
a history that drops old steps just falls back to a shorter reuse. On 2 CPU cores a 3,000-token
SmolLM2 prompt costs ~6 s to prefill from scratch (bench/prefix_cache.py measures the whole episode).
"""

from __future__ import annotations

import copy
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devices.harness.answer import InvalidAction, parse_completion
from devices.harness.context import episode_messages, render_header
from schemas.actions import Finish
from schemas.observations import Observation
from trainer.envs import ACTION_NAMES, action_tools
from trainer.lookup_decoding import ActionComplete, action_complete, greedy_lookup, plain_greedy

__all__ = ["ACTION_JSON_SCHEMA", "ModelPolicy", "PolicyStats", "answer_schema", "default_device", "load_policy"]

logger = logging.getLogger(__name__)

# One action fits: the longest oracle answer in the suite is 131 SmolLM2 tokens (median 46).
DEFAULT_MAX_NEW_TOKENS = 160
TOOL_CALL_OPEN = "<tool_call>\n"
TOOL_CALL_CLOSE = "\n</tool_call>"
# The constrained answer without a catalogue: a JSON object naming one of the planner's actions.
ACTION_JSON_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "enum": list(ACTION_NAMES)},
                   "arguments": {"type": "object"}},
    "required": ["name", "arguments"],
}


def _closed(schema: Any) -> Any:
    """`schema` with every object closed (`additionalProperties: false` unless it says otherwise),
    so a constrained answer cannot keep inventing keys until it runs out of tokens."""
    if isinstance(schema, list):
        return [_closed(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _closed(v) for k, v in schema.items()}
    if "properties" in schema and isinstance(schema["properties"], dict):
        out["properties"] = {k: _closed(v) for k, v in schema["properties"].items()}
        out.setdefault("additionalProperties", False)
        out.setdefault("type", "object")
    return out


def _named(key: str, value: str, arguments: Any, *, arguments_required: bool = True,
           more: dict[str, Any] | None = None) -> dict[str, Any]:
    """An object naming `value` under `key`, with `arguments` (optional when nothing in them is)."""
    properties = {key: {"enum": [value]}, "arguments": arguments, **(more or {})}
    required = [key, *(["arguments"] if arguments_required else []), *(more or {})]
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _call(key: str, name: str, parameters: Any) -> dict[str, Any]:
    """A call of tool or skill `name`: its arguments may be left out when it requires none (the
    planner's answers leave empty arguments out)."""
    needed = bool(isinstance(parameters, dict) and parameters.get("required"))
    return _named(key, name, _closed(parameters), arguments_required=needed)


def answer_schema(catalogue: Any | None) -> dict[str, Any]:
    """The JSON Schema of one valid answer in an episode with `catalogue`: one of the planner's
    actions with its own arguments; `tool_call` names one of the catalogue's tools with that
    tool's argument schema, `use_skill` one of its skills, `delegate` one of its sub-agents.
    Every object is closed. Without a catalogue: any action name with any arguments object."""
    if catalogue is None:
        return ACTION_JSON_SCHEMA
    options = []
    for tool in action_tools():
        function = tool["function"]
        name, arguments = function["name"], _closed(function["parameters"])
        if name == "tool_call":
            if not catalogue.tools:
                continue
            arguments = {"anyOf": [_call("name", t.name, t.parameters) for t in catalogue.tools]}
        elif name == "use_skill":
            if not catalogue.skills:
                continue
            arguments = {"anyOf": [_call("skill", s.name, s.parameters) for s in catalogue.skills]}
        elif name == "delegate":
            if not catalogue.subagents:
                continue
            arguments = {**arguments, "properties": {**arguments["properties"],
                                                     "agent": {"enum": [a.name for a in catalogue.subagents]}}}
        options.append(_named("name", name, arguments))
    return {"anyOf": options}


@dataclass
class PolicyStats:
    """Per-step figures: prompt and output tokens, valid and invalid answers."""

    steps: int = 0
    invalid: int = 0
    prompt_tokens: list[int] = field(default_factory=list)
    output_tokens: list[int] = field(default_factory=list)
    invalid_reasons: dict[str, int] = field(default_factory=dict)

    @property
    def validity(self) -> float:
        return 1.0 - self.invalid / self.steps if self.steps else 0.0


class ModelPolicy:
    """Greedy (or sampled) decoding of one action per step from a local model."""

    def __init__(self, model: Any, tokenizer: Any, *, name: str = "model",
                 max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
                 constrained: bool = False, temperature: float = 0.0, seed: int = 0,
                 prefix_cache: bool = True, lookup: bool = True) -> None:
        self.name = name
        self.model = model
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.seed = seed
        self.prefix_cache = prefix_cache
        self.lookup = lookup  # greedy batch-1 answers decode with lookup drafts (same text, fewer passes)
        self.stats = PolicyStats()
        self._tools = action_tools()
        self._constraint = _constraint(tokenizer) if constrained else None
        self._goal = ""
        self._catalogue: Any = None
        self._schema: dict[str, Any] | None = None
        self.context_header: str | None = None
        self._steps: list[tuple[Any, Observation]] = []
        self._last: Any = None
        self.last_invalid: InvalidAction | None = None
        self._cache: tuple[list[int], Any] | None = None

    # -- the Policy protocol ---------------------------------------------------------------------
    def begin(self, goal: str, catalogue: Any) -> None:
        """Starts an episode: the goal text and the harness's catalogue."""
        self._goal, self._catalogue = goal, catalogue
        self.context_header = None
        self._schema = None
        self._steps = []
        self._last = None
        self.last_invalid = None
        self._cache: tuple[list[int], Any] | None = None  # (token ids whose keys/values it holds, cache)

    def prompt_messages(self, observation: Observation) -> list[dict[str, Any]]:
        """Records `observation` as the result of the last action and returns the chat to answer
        next: the one context (devices.harness.context) of the goal, catalogue and steps seen."""
        if self.context_header is None:
            self.context_header = render_header(self._goal, self._catalogue, observation)
        elif self._last is not None:
            self._steps.append((self._last, observation))
        return episode_messages(self.context_header, self._steps)

    def next_action(self, observation: Observation) -> Any:
        ids = self.prompt_ids(self.prompt_messages(observation))
        return self.accept(self.generate_batch([ids], [self.answer_schema()] if self.constrained else None)[0])

    @property
    def constrained(self) -> bool:
        """Whether answers are decoded under the JSON-schema constraint."""
        return self._constraint is not None

    def answer_schema(self) -> dict[str, Any]:
        """What a constrained answer of this episode may be (`answer_schema` of its catalogue,
        built once per episode)."""
        if self._schema is None:
            self._schema = answer_schema(self._catalogue)
        return self._schema

    def accept(self, text: str) -> Any:
        """The action in `text` (this episode's answer to its last prompt); invalid output counts as
        `invalid` and becomes `finish`."""
        action = parse_completion(text)
        self.stats.steps += 1
        if isinstance(action, InvalidAction):
            self.stats.invalid += 1
            key = action.reason.split(":")[0]
            self.stats.invalid_reasons[key] = self.stats.invalid_reasons.get(key, 0) + 1
            self.last_invalid = action
            self._last = None
            return Finish()
        self._last = action
        return action

    def fork(self) -> ModelPolicy:
        """A policy for another concurrent episode: the same model, decoding settings and stats,
        its own episode state (trainer.batched runs many at once)."""
        twin = copy.copy(self)
        twin.begin(self._goal, self._catalogue)
        return twin

    # -- decoding ----------------------------------------------------------------------------------
    def prompt_ids(self, messages: list[dict[str, Any]]) -> list[int]:
        rendered = self.tokenizer.apply_chat_template(messages, tools=self._tools, tokenize=False,
                                                      add_generation_prompt=True)
        if self._constraint is not None:
            rendered += TOOL_CALL_OPEN
        return self.tokenizer(rendered, add_special_tokens=False)["input_ids"]

    def generate_batch(self, prompts: list[list[int]], schemas: list[dict[str, Any]] | None = None) -> list[str]:
        """Decodes one answer per prompt (token ids); the texts come back in order. Decoding of a
        row ends once it holds a complete action (`ActionComplete`: the reader ignores the rest).
        One unconstrained greedy prompt (the CPU path) decodes with lookup drafts and the episode's
        prefix cache (trainer.lookup_decoding: the same answer in fewer forward passes); anything
        else goes through one left-padded `generate` call. With constrained decoding, row i follows
        `schemas[i]` (each episode's `answer_schema()`; default: any action). Tokens are counted
        in `stats`."""
        if len(prompts) == 1 and self.lookup and self.forced_checks:
            rows = [self._generate_lookup(prompts[0])]
        else:
            rows = self._generate(prompts, schemas, TOOL_CALL_OPEN if self._constraint is not None else "")
        texts = []
        for ids, row in zip(prompts, rows, strict=True):
            new = _through_eos(row, self.tokenizer.eos_token_id)
            self.stats.prompt_tokens.append(len(ids))
            self.stats.output_tokens.append(len(new))
            text = self.tokenizer.decode(new, skip_special_tokens=True)
            if self._constraint is not None:
                text = TOOL_CALL_OPEN + text.strip() + TOOL_CALL_CLOSE
            texts.append(text)
        return texts

    @property
    def forced_checks(self) -> bool:
        """Whether answers are plain argmax (greedy, unconstrained, no logits setting), so lookup
        drafts and `writes_exactly` stand for `generate`'s decoding."""
        return (self.model is not None and self._constraint is None and self.temperature <= 0
                and plain_greedy(self.model.generation_config))

    def writes_exactly(self, ids: list[int], answer: str) -> bool:
        """Teacher-forced, in one forward pass: whether greedy decoding of `ids` (a prompt) would
        write `answer`'s tokens up to its complete action (where decoding stops), i.e. whether
        `next_action` would answer with exactly that text. The pass reuses and keeps the episode's
        prefix cache. Counted as a step with no output in `stats`."""
        import torch

        target = self.tokenizer(answer, add_special_tokens=False)["input_ids"]
        if not target:
            raise ValueError("writes_exactly needs an answer of at least one token")
        upto = next((k for k in range(1, len(target) + 1)
                     if action_complete(self.tokenizer.decode(target[:k], skip_special_tokens=True))), len(target))
        cache = self._reuse(ids) if self.prefix_cache else self._fresh_cache()
        held = cache.get_seq_length()  # < len(ids): the prompt's last token is always fed
        sequence = ids + target[:upto]
        device = next(self.model.parameters()).device
        with torch.no_grad():
            logits = self.model(input_ids=torch.tensor([sequence[held:]], device=device), past_key_values=cache,
                                use_cache=True, logits_to_keep=upto + 1).logits
        greedy = logits[0, :upto].argmax(-1).tolist()  # what greedy writes after the prompt and each answer prefix
        if self.prefix_cache:
            self._cache = (sequence, cache)
        self.stats.prompt_tokens.append(len(ids))
        return greedy == target[:upto]

    def _generate_lookup(self, ids: list[int]) -> list[int]:
        """One greedy answer by lookup decoding, keeping the episode's prefix cache."""
        cache = self._reuse(ids) if self.prefix_cache else self._fresh_cache()
        new, held = greedy_lookup(
            self.model, ids, cache=cache, max_new_tokens=self.max_new_tokens,
            eos_token_id=self.tokenizer.eos_token_id,
            stop=lambda tokens: action_complete(self.tokenizer.decode(tokens, skip_special_tokens=True)))
        if self.prefix_cache:
            self._cache = (held, cache)
        return new

    def _generate(self, prompts: list[list[int]], schemas: list[dict[str, Any]] | None, prefix: str) -> list[list[int]]:
        """The new tokens of each prompt from one left-padded `generate` call."""
        import torch
        from transformers import StoppingCriteriaList

        width = max(len(ids) for ids in prompts)
        kwargs: dict[str, Any] = {"max_new_tokens": self.max_new_tokens,
                                  "eos_token_id": self.tokenizer.eos_token_id,
                                  "pad_token_id": self.tokenizer.pad_token_id,
                                  "stopping_criteria": StoppingCriteriaList([ActionComplete(self.tokenizer, width, prefix)])}
        if self.temperature > 0:
            torch.manual_seed(self.seed + self.stats.steps)
            kwargs.update(do_sample=True, temperature=self.temperature, top_k=0, top_p=1.0)
        else:
            kwargs.update(do_sample=False)
        if self._constraint is not None:
            enforcers = [self._constraint(schema) for schema in schemas or [ACTION_JSON_SCHEMA] * len(prompts)]
            kwargs["prefix_allowed_tokens_fn"] = lambda row, sent: enforcers[row](row, sent)
        pad = self.tokenizer.pad_token_id
        device = next(self.model.parameters()).device
        input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for ids in prompts], device=device)
        mask = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids in prompts], device=device)
        cache = self._reuse(prompts[0]) if self.prefix_cache and len(prompts) == 1 else None
        if cache is not None:
            kwargs["past_key_values"] = cache
        with torch.no_grad():
            out = self.model.generate(input_ids, attention_mask=mask, **kwargs)
        if cache is not None:
            self._cache = (out[0, :cache.get_seq_length()].tolist(), cache)
        # a row stopped at its complete action is padded after it (with eos where pad is eos)
        cut = pad is not None and pad != self.tokenizer.eos_token_id
        return [row[:row.index(pad)] if cut and pad in row else row for row in out[:, width:].tolist()]

    def _fresh_cache(self) -> Any:
        from transformers import DynamicCache

        return DynamicCache(config=self.model.config)

    def _reuse(self, ids: list[int]) -> Any:
        """This episode's attention cache cut back to the longest prefix it shares with `ids`
        (at least one token of `ids` is left to prefill); a new cache when nothing is shared."""
        held, cache = self._cache or ([], None)  # the cache holds keys/values of exactly `held`
        shared = next((i for i, (a, b) in enumerate(zip(held, ids)) if a != b), min(len(held), len(ids)))
        keep = min(shared, len(ids) - 1)
        if cache is None or keep == 0:
            return self._fresh_cache()
        if len(held) > keep:
            cache.crop(keep - len(held))
        return cache


def _through_eos(row: list[int], eos: int | None) -> list[int]:
    """A generated row up to and including its first eos (later positions are padding)."""
    return row[:row.index(eos) + 1] if eos is not None and eos in row else row


def _constraint(tokenizer: Any) -> Any:
    """lm-format-enforcer's JSON-schema constraint on the action object (its core API: its
    transformers adapter imports a module transformers 5 removed)."""
    try:
        from lmformatenforcer import JsonSchemaParser, TokenEnforcer
        from lmformatenforcer.tokenenforcer import TokenEnforcerTokenizerData
    except ImportError as exc:
        raise RuntimeError("constrained decoding needs lm-format-enforcer; install the 'train' extra") from exc
    zero = tokenizer.encode("0", add_special_tokens=False)[-1]
    special = set(tokenizer.all_special_ids)
    regular = []
    for token in range(len(tokenizer)):
        if token in special:
            continue
        after_zero = tokenizer.decode([zero, token])[1:]
        regular.append((token, after_zero, len(after_zero) > len(tokenizer.decode([token]))))
    data = TokenEnforcerTokenizerData(regular, lambda ids: tokenizer.decode(ids).rstrip("\ufffd"),
                                      tokenizer.eos_token_id, False, len(tokenizer))

    def for_schema(schema: dict[str, Any]) -> Any:
        enforcer = TokenEnforcer(data, JsonSchemaParser(schema))

        def allowed(batch_id: int, sent: Any) -> list[int]:
            return enforcer.get_allowed_tokens(sent.tolist()).allowed_tokens
        return allowed

    return for_schema


def default_device() -> str:
    """`cuda` where a GPU is visible, else `cpu`."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def load_policy(path: str | Path, *, device: str | None = None, dtype: str | None = None,
                **kwargs: Any) -> ModelPolicy:
    """A ModelPolicy on the model in local directory `path` (a checkpoint or a base model), on
    `device` (default: the GPU if there is one, in bf16; else the CPU in fp32). `dtype`
    ("float32" or "bfloat16") overrides the device's default: bf16 prefill is ~1.7x faster than
    fp32 on a CPU with AVX-512 BF16 (measured on this project's 2-core machine)."""
    from trainer.models import load_model

    device = device or default_device()
    if dtype not in (None, "float32", "bfloat16"):
        raise ValueError(f"dtype must be float32 or bfloat16, got {dtype!r}")
    loaded = load_model(path, dtype=dtype or ("bfloat16" if device.startswith("cuda") else "float32"))
    loaded.model.to(device)
    loaded.model.eval()
    meta = Path(path) / "flywheel_checkpoint.json"
    name = json.loads(meta.read_text()).get("checkpoint_id", Path(path).name) if meta.is_file() else Path(path).name
    return ModelPolicy(loaded.model, loaded.tokenizer, name=f"model:{name}", **kwargs)
