"""Greedy decoding of one answer with drafts looked up in the prompt, and the stop at a complete action.

An answer mostly copies what the prompt already holds: the `<tool_call>` frame and `"arguments"`
keys of earlier answers, a tool's name from the catalogue, an id from a tool result. So instead of
one forward pass per token, `greedy_lookup` takes the tokens that followed the latest earlier
occurrence of the answer's last few tokens as a draft, checks the whole draft in one forward pass,
and keeps the longest prefix that greedy decoding would have chosen anyway, plus greedy's own next
token (prompt-lookup speculative decoding). The answer is greedy decoding's answer: a draft token
is kept only when it is the argmax at its position, so the draft changes the number of forward
passes, never the text (up to floating-point rounding: a chunk of positions is multiplied in one
matmul; in float32 the tests find the texts identical to `generate`).

On a CPU one forward pass over a handful of tokens costs about as much as over one (the weights are
read once either way), so each accepted draft token is nearly free. It serves batch size 1, the CPU
path: `ModelPolicy.generate_batch` uses it for one unconstrained greedy prompt, with its prefix
cache.

`ActionComplete` ends decoding as soon as the text holds what the answer reader
(`devices.harness.answer.parse_completion`) will take: a complete JSON value after `<tool_call>`.
Whatever a model writes after that is ignored by the reader, so stopping there changes no action
and saves the closing tokens (and a rambling model's tail).
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["DRAFT_TOKENS", "ActionComplete", "action_complete", "greedy_lookup", "lookup_draft", "plain_greedy"]

logger = logging.getLogger(__name__)

# Tokens proposed per forward pass: answers copy runs of ~5-15 tokens (a tool name, an id, a
# frame); a longer draft costs more of the pass when it is rejected early.
DRAFT_TOKENS = 10
# The longest n-gram matched first: 3 tokens pin the place well (`"name": "`); shorter ones are
# tried when it does not occur.
MAX_NGRAM = 3
_OPEN = "<tool_call>"
# Generation settings that change which token greedy decoding picks (logits processors that
# `generate` would apply and `greedy_lookup` does not): set to anything but their default, the
# answer goes through `generate`.
_LOGIT_SETTINGS = ("sequence_bias", "repetition_penalty", "encoder_repetition_penalty", "no_repeat_ngram_size",
                   "encoder_no_repeat_ngram_size", "bad_words_ids", "suppress_tokens", "begin_suppress_tokens",
                   "forced_bos_token_id", "forced_eos_token_id", "min_length", "min_new_tokens",
                   "exponential_decay_length_penalty", "guidance_scale", "watermarking_config", "num_beams",
                   "do_sample", "token_healing")
_DECODER = json.JSONDecoder()


def action_complete(text: str) -> bool:
    """Whether `text` already holds the answer reader's whole action: `<tool_call>` followed by one
    complete JSON value (what `parse_completion` reads; it ignores anything after it)."""
    start = text.find(_OPEN)
    if start < 0:
        return False
    brace = text.find("{", start + len(_OPEN))
    if brace < 0:
        return False
    try:
        _DECODER.raw_decode(text, brace)
    except json.JSONDecodeError:
        return False
    return True


class ActionComplete:
    """A transformers stopping criterion: a row is done once its new text (after `prefix`, the part
    of the answer the prompt already wrote, such as the constrained path's `<tool_call>`) holds a
    complete action. Rows are decoded from `width` on (the left-padded prompt width)."""

    def __init__(self, tokenizer: Any, width: int, prefix: str = "") -> None:
        self.tokenizer = tokenizer
        self.width = width
        self.prefix = prefix

    def __call__(self, input_ids: Any, scores: Any, **_: Any) -> Any:
        import torch

        done = [action_complete(self.prefix + self.tokenizer.decode(row[self.width:], skip_special_tokens=True))
                for row in input_ids.tolist()]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)


def plain_greedy(generation_config: Any) -> bool:
    """Whether a model's generation config leaves greedy decoding as plain argmax (no setting of
    `_LOGIT_SETTINGS` differs from transformers' default), so `greedy_lookup` gives its answer."""
    default = _default_generation_config()
    return all(getattr(generation_config, name, None) == getattr(default, name, None) for name in _LOGIT_SETTINGS)


@functools.cache
def _default_generation_config() -> Any:
    """transformers' defaults, built once (plain_greedy is asked at every decoded step)."""
    from transformers import GenerationConfig

    return GenerationConfig()


def lookup_draft(tokens: Sequence[int], size: int = DRAFT_TOKENS, max_ngram: int = MAX_NGRAM) -> list[int]:
    """Up to `size` tokens that followed the latest earlier occurrence of the last n tokens of
    `tokens` (n from `max_ngram` down to 1); empty when none of them occurred before."""
    length = len(tokens)
    for n in range(min(max_ngram, length - 1), 0, -1):
        tail = list(tokens[length - n:])
        first = tail[0]
        for start in range(length - n - 1, -1, -1):  # latest first: recent answers copy best
            if tokens[start] == first and list(tokens[start:start + n]) == tail:
                follow = list(tokens[start + n:start + n + size])
                if follow:
                    return follow
    return []


def greedy_lookup(model: Any, prompt: Sequence[int], *, cache: Any, max_new_tokens: int,
                  eos_token_id: int | None, stop: Callable[[list[int]], bool] | None = None,
                  draft_tokens: int = DRAFT_TOKENS) -> tuple[list[int], list[int]]:
    """Greedy decoding of `prompt` (token ids) with lookup drafts. `cache` (a transformers
    DynamicCache) may already hold the keys/values of a prefix of `prompt` (shorter than it).
    Decoding ends after `eos_token_id`, after `max_new_tokens`, or after the first token for which
    `stop(new_tokens)` is true, exactly where `generate` with those settings ends.

    Returns (the new tokens, the tokens whose keys/values `cache` now holds)."""
    import torch

    device = next(model.parameters()).device
    held = cache.get_seq_length()
    if held >= len(prompt):
        raise ValueError("the cache must leave at least one prompt token to prefill")
    sequence = list(prompt)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([sequence[held:]], device=device), past_key_values=cache,
                       use_cache=True).logits
    pending = int(logits[0, -1].argmax())
    new: list[int] = []

    def ends(token: int) -> bool:
        """Appends `token` and says whether decoding ends with it."""
        new.append(token)
        return token == eos_token_id or len(new) >= max_new_tokens or (stop is not None and stop(new))

    while True:
        if ends(pending):
            return new, sequence + new[:-1]  # the last token was never fed
        draft = lookup_draft(sequence + new, draft_tokens)[: max_new_tokens - len(new)]
        fed = len(sequence) + len(new) - 1  # what the cache holds: everything but `pending`
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([[pending, *draft]], device=device), past_key_values=cache,
                           use_cache=True).logits
        greedy = logits[0].argmax(-1).tolist()
        accepted = 0
        while accepted < len(draft) and draft[accepted] == greedy[accepted]:
            accepted += 1
        _crop_to(cache, fed + 1 + accepted)  # `pending` and the kept draft tokens; the rest are dropped
        for token in draft[:accepted]:
            if ends(token):
                _crop_to(cache, len(sequence) + len(new))  # drop the kept draft tokens after the end
                return new, sequence + new
        pending = greedy[accepted]


def _crop_to(cache: Any, length: int) -> None:
    """Cuts `cache` back to its first `length` tokens (transformers takes the count to remove)."""
    extra = cache.get_seq_length() - length
    if extra > 0:
        cache.crop(-extra)
