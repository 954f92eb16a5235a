"""Lookup decoding gives `generate`'s greedy answer in fewer passes; the stop at a complete action changes no action."""

from __future__ import annotations

from pathlib import Path

import pytest

from devices.harness import Harness
from devices.harness.answer import InvalidAction, format_action, parse_completion
from devices.sim import SimPhone
from devices.suite.episode import run_episode
from devices.suite.instances import generate_split
from schemas.actions import Answer, Finish, MemoryWrite, ToolCall
from trainer.lookup_decoding import action_complete, greedy_lookup, lookup_draft, plain_greedy
from trainer.policy import load_policy

ANSWERS = [ToolCall(name="contacts.search", arguments={"query": "Omar {x}"}), ToolCall(name="clock.now"),
           MemoryWrite(key="k", value={"a": [1, {"b": "}"}]}), Answer(text='say "}}" twice'), Finish()]


@pytest.mark.parametrize("action", ANSWERS, ids=lambda a: a.action_type)
def test_a_complete_action_is_seen_exactly_where_the_reader_has_it(action) -> None:
    text = format_action(action) + "\nand then some prose {\"name\": \"finish\"}"
    ends = [k for k in range(len(text) + 1) if action_complete(text[:k])]
    assert ends, "the whole answer holds an action"
    first = ends[0]
    assert text[:first].endswith("}")  # the JSON value's last brace, not a brace inside a string
    assert parse_completion(text[:first]) == parse_completion(text) == action
    assert all(isinstance(parse_completion(text[:k]), InvalidAction) for k in range(first))


def test_no_stop_before_the_tool_call_tag_even_after_a_bare_object() -> None:
    # The reader prefers an object after <tool_call>: a bare object before it is not the answer yet.
    assert not action_complete('{"action_type": "finish"} thinking... ')
    assert not action_complete('{"action_type": "finish"} <tool_call>\n{"name": "answer", "arguments": {"te')
    assert action_complete('{"x": 1} <tool_call>\n{"name": "finish", "arguments": {}}')


def test_the_draft_is_what_followed_the_latest_occurrence() -> None:
    tokens = [5, 6, 7, 1, 5, 6, 8, 9, 2, 5, 6]
    assert lookup_draft(tokens, size=3) == [8, 9, 2]  # "5 6" last seen before "8 9 2", not "7 1"
    assert lookup_draft([1, 2, 3], size=3) == []
    assert lookup_draft([4, 1, 2, 3, 9, 3], size=2) == [9, 3]  # a 1-gram when no longer one matched


def _prompts(tokenizer) -> list[list[int]]:
    """Real context prompts (the first screen of two templates) and a repetitive one."""
    out = []
    for task in [t for t in generate_split("dev", 1, 0)][:2]:
        harness = Harness(SimPhone())
        observation = harness.reset(task)
        messages = harness.context_messages()
        out.append(tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True,
                                                 return_dict=False))
        del observation
    out.append(tokenizer("call call call contacts.search contacts.search", add_special_tokens=False)["input_ids"] * 4)
    return [list(p) for p in out]


def test_lookup_decoding_gives_generates_greedy_tokens_in_fewer_passes(tiny_model: Path) -> None:
    import torch
    from transformers import DynamicCache

    policy = load_policy(tiny_model, dtype="float32")
    model, tokenizer = policy.model, policy.tokenizer
    saved_passes = 0
    for prompt in _prompts(tokenizer):
        ids = torch.tensor([prompt])
        with torch.no_grad():
            expected = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=40, do_sample=False,
                                      eos_token_id=None, pad_token_id=tokenizer.pad_token_id)[0, len(prompt):].tolist()
        passes: list[int] = []
        hook = model.register_forward_pre_hook(lambda m, a, kw, seen=passes: seen.append(1),
                                               with_kwargs=True)
        cache = DynamicCache(config=model.config)
        new, held = greedy_lookup(model, prompt, cache=cache, max_new_tokens=40, eos_token_id=None)
        hook.remove()
        assert new == expected
        assert held == (prompt + new)[:len(held)] and len(held) >= len(prompt) + len(new) - 1
        assert cache.get_seq_length() == len(held)
        saved_passes += len(new) - len(passes)
    assert saved_passes > 0  # the tiny model repeats itself, so some drafts were kept


def test_lookup_decoding_stops_where_generate_stops(tiny_model: Path) -> None:
    from transformers import DynamicCache

    policy = load_policy(tiny_model, dtype="float32")
    prompt = _prompts(policy.tokenizer)[0]
    full, _ = greedy_lookup(policy.model, prompt, cache=DynamicCache(config=policy.model.config),
                            max_new_tokens=30, eos_token_id=None)
    for cut in (1, 7, 19):
        eos = full[cut - 1]
        first = full.index(eos) + 1  # decoding ends at the first appearance of the "eos"
        cache = DynamicCache(config=policy.model.config)
        new, held = greedy_lookup(policy.model, prompt, cache=cache, max_new_tokens=30, eos_token_id=eos)
        assert new == full[:first] and cache.get_seq_length() == len(held)
        stopped, _ = greedy_lookup(policy.model, prompt, cache=DynamicCache(config=policy.model.config),
                                   max_new_tokens=30, eos_token_id=None, stop=lambda t, c=cut: len(t) >= c)
        assert stopped == full[:cut]


def test_a_reused_prefix_cache_answers_the_same(tiny_model: Path) -> None:
    from transformers import DynamicCache

    policy = load_policy(tiny_model, dtype="float32")
    prompt = _prompts(policy.tokenizer)[0]
    fresh, _ = greedy_lookup(policy.model, prompt, cache=DynamicCache(config=policy.model.config),
                             max_new_tokens=20, eos_token_id=None)
    cache = DynamicCache(config=policy.model.config)
    _, held = greedy_lookup(policy.model, prompt[:-5], cache=cache, max_new_tokens=12, eos_token_id=None)
    shared = next(i for i, (a, b) in enumerate(zip(held, prompt, strict=False)) if a != b)
    cache.crop(shared)
    reused, _ = greedy_lookup(policy.model, prompt, cache=cache, max_new_tokens=20, eos_token_id=None)
    assert reused == fresh
    with pytest.raises(ValueError, match="at least one prompt token"):
        greedy_lookup(policy.model, prompt[:3], cache=cache, max_new_tokens=2, eos_token_id=None)


def test_the_policy_plays_the_same_episode_with_and_without_lookup(tiny_model: Path) -> None:
    task = next(t for t in generate_split("dev", 1, 0) if t.template == "star_relation").model_copy(
        update={"max_steps": 3})
    runs = {}
    for lookup in (True, False):
        policy = load_policy(tiny_model, max_new_tokens=24, dtype="float32", lookup=lookup)
        result = run_episode(Harness(SimPhone()), task, policy)
        runs[lookup] = (result.score, result.steps, policy.stats.output_tokens, policy.last_invalid)
    assert runs[True] == runs[False]


def test_a_logits_setting_sends_the_answer_through_generate(tiny_model: Path) -> None:
    policy = load_policy(tiny_model)
    assert plain_greedy(policy.model.generation_config)
    policy.model.generation_config.repetition_penalty = 1.3
    assert not plain_greedy(policy.model.generation_config)
    policy.model.generation_config.repetition_penalty = 1.0
