"""One context for every path: the rollout's record, the harness, the curator's rows, the oracle
snapshot, the model policy, SFT's rendering and GRPO's environment show a step byte for byte alike."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from devices.blobs import BlobStore
from devices.harness import Harness
from devices.harness.answer import format_action
from devices.harness.context import CONTEXT_VERSION
from devices.harness.episode import play
from devices.sim import SimPhone
from devices.suite.policies import OraclePolicy
from devices.suite.registry import get_template
from services.curator.examples import recorded_pairs
from services.dataflow.ids import derived_id
from services.dataflow.tasks import task_event
from services.rollout.engine import Rollout
from services.rollout.policies import load_policy as load_rollout_policy
from trainer.data import build_oracle_snapshot, read_snapshot, render_examples
from trainer.envs import PhoneEnvironment, action_tools
from trainer.models import load_model
from trainer.policy import ModelPolicy

# Templates that reach several steps, a tool list, a skill and a long result between them.
TEMPLATES = ["star_relation", "text_relation", "cheapest_flight_to_relation"]


def _task(name: str):
    return get_template(name).generate("dev", 0, 0)


def _oracle_prompts(task) -> tuple[list[str], list[object], list[object]]:
    """Harness.context() before every oracle step, with the observations and actions."""
    harness = Harness(SimPhone())
    prompts, observations, actions = [], [], []

    def record(_index: int, observation, action) -> None:
        prompts.append(harness.context())
        observations.append(observation)
        actions.append(action)

    play(harness, task, OraclePolicy(), on_step=record)
    return prompts, observations, actions


@pytest.mark.parametrize("name", TEMPLATES)
def test_every_path_renders_the_same_prompt(name: str, tiny_model, tmp_path) -> None:
    task = _task(name)
    harness_prompts, observations, actions = _oracle_prompts(task)
    assert len(harness_prompts) >= 2

    # the rollout records the header; the curator rebuilds every step from the record alone
    event = task_event(task, tier="easy", event_id=derived_id("t", task.task_id), source="test/0",
                       correlation_id=task.task_id)
    rollout = Rollout(SimPhone("s"), load_rollout_policy("oracle"), "oracle", BlobStore(tmp_path / "b"))
    _, ended = rollout.run(event)
    rollout.close()
    assert ended.context_version == CONTEXT_VERSION
    curator_prompts = [p for p, _ in recorded_pairs(ended)]
    assert curator_prompts == harness_prompts

    # the oracle snapshot (what `flywheel train sft` builds) holds the same prompts
    snap = build_oracle_snapshot(tmp_path / "snap", split="dev", templates=[name])
    assert read_snapshot(snap).table.column("prompt").to_pylist() == harness_prompts

    # the model policy, fed the same observations, asks the same chat
    tokenizer = load_model(tiny_model).tokenizer
    policy = ModelPolicy(None, tokenizer, prefix_cache=False)
    policy.begin(task.goal, _catalogue(task))
    policy_texts = []
    for observation, action in zip(observations, actions, strict=True):
        messages = policy.prompt_messages(observation)
        assert json.dumps(messages, ensure_ascii=False) == harness_prompts[len(policy_texts)]
        policy_texts.append(tokenizer.decode(policy.prompt_ids(messages)))
        policy.accept(format_action(action))

    # SFT renders the snapshot's rows into exactly the text the policy decodes from
    examples, skipped = render_examples(read_snapshot(snap), tokenizer)
    assert skipped == 0
    assert [tokenizer.decode(tokenizer(e["prompt"], add_special_tokens=False)["input_ids"])
            for e in examples] == policy_texts

    # GRPO's environment starts from the same header (TRL appends the same tool turns after it)
    header = json.loads(harness_prompts[0])[0]["content"]
    assert PhoneEnvironment().reset(task=task.model_dump_json()) == header
    assert ended.context == header


def _catalogue(task):
    harness = Harness(SimPhone())
    harness.reset(task)
    return harness.catalogue()


def test_run_trains_and_evaluates_on_one_format(tiny_model, tmp_path) -> None:
    """What `flywheel run` trains on (curator rows) and what it evaluates with (ModelPolicy) is
    one chat format: the chat template renders both with the same action list."""
    task = _task("star_relation")
    prompts, observations, _ = _oracle_prompts(task)
    tokenizer = load_model(tiny_model).tokenizer
    policy = ModelPolicy(None, tokenizer, prefix_cache=False)
    policy.begin(task.goal, _catalogue(task))
    asked = tokenizer.decode(policy.prompt_ids(policy.prompt_messages(observations[0])))
    table = pa.Table.from_pylist([{"prompt": prompts[0], "completion": format_action(_first_action(task))}])
    (tmp_path / "s").mkdir()
    pq.write_table(table, tmp_path / "s" / "data.parquet")
    trained = render_examples(read_snapshot(tmp_path / "s"), tokenizer)[0][0]["prompt"]
    assert tokenizer.decode(tokenizer(trained, add_special_tokens=False)["input_ids"]) == asked
    assert "Actions:" in trained and len(action_tools()) > 5
def _first_action(task):
    return play(Harness(SimPhone()), task, OraclePolicy(), max_steps=1).actions[0]
